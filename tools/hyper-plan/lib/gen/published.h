/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The parameter counts the model cards publish for the shipped configs
 * of public models (tools/hyper-plan/configs), against which bench-plan
 * and selftests/plan/plan_config.c hold the generated graphs' weights.
 */
#ifndef HP_PUBLISHED_H
#define HP_PUBLISHED_H

#include <stdint.h>

struct published {
	const char *config;	/* NAME of tools/hyper-plan/configs/NAME.json */
	const char *card;	/* the model card */
	double params;		/* as published */
	/*
	 * Parameters the published figure counts twice: a tied LM head that
	 * the checkpoint stores as a tensor of its own (falcon-7b's 7.22B).
	 */
	uint64_t twice;
};

static const struct published published_models[] = {
	{ "llama3.1-8b", "meta-llama/Llama-3.1-8B", 8.03e9, 0 },
	{ "llama3.1-405b", "meta-llama/Llama-3.1-405B", 405.9e9, 0 },
	{ "qwen2.5-7b", "Qwen/Qwen2.5-7B", 7.62e9, 0 },
	{ "qwen2.5-32b", "Qwen/Qwen2.5-32B", 32.76e9, 0 },
	{ "mixtral-8x22b", "mistralai/Mixtral-8x22B-v0.1", 140.6e9, 0 },
	{ "mistral-nemo", "mistralai/Mistral-Nemo-Base-2407", 12.25e9, 0 },
	{ "falcon-7b", "tiiuae/falcon-7b", 7.22e9, 65024ULL * 4544 },
	{ "phi3-mini", "microsoft/Phi-3-mini-4k-instruct", 3.82e9, 0 },
	{ "gemma2-9b", "google/gemma-2-9b", 9.24e9, 0 },
	{ "deepseek-v2-lite", "deepseek-ai/DeepSeek-V2-Lite", 15.7e9, 0 },
	{ "gpt2", "openai-community/gpt2", 124439808, 0 },
	{ "olmoe-1b-7b", "allenai/OLMoE-1B-7B-0924", 6.92e9, 0 },
	{ "gemma-7b", "google/gemma-7b", 8.54e9, 0 },
	{ "qwen1.5-moe-a2.7b", "Qwen/Qwen1.5-MoE-A2.7B", 14.3e9, 0 },
};

#endif

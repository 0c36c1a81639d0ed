// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A model from a Hugging Face style config.json.  "model_type" picks the
 * family whose defaults (those of its transformers config class) fill the
 * keys the file leaves out; the keys below override them.  Keys that do
 * not change memory or compute (token ids, rope, epsilons...) are
 * skipped; any other key is refused by name, so that a shape the
 * generators cannot draw is never planned as another one.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "model.h"

struct family {
	const char *type;
	struct model m;
};

#define SEQ(L, h, nh, kv, f, V)						\
	.layers = L, .hidden = h, .heads = nh, .kv_heads = kv, .ffn = f,	\
	.vocab = V

static const struct family families[] = {
	{ "llama", { SEQ(32, 4096, 32, 32, 11008, 32000) } },
	{ "mistral", { SEQ(32, 4096, 32, 8, 14336, 32000), .window = 4096 } },
	{ "mixtral", { SEQ(32, 4096, 32, 8, 14336, 32000), .experts = 8,
		       .top_k = 2, .window = 0 } },
	{ "qwen2", { SEQ(32, 4096, 32, 32, 22016, 151936) } },
	{ "qwen2_moe", { SEQ(24, 2048, 16, 16, 5632, 151936), .experts = 60,
			 .top_k = 4, .expert_ffn = 1408, .shared_ffn = 5632 } },
	{ "gemma", { SEQ(28, 3072, 16, 16, 24576, 256000), .head_dim = 256,
		     .tied = true, .gelu = true } },
	{ "falcon", { SEQ(32, 4544, 71, 1, 4 * 4544, 65024), .parallel = true,
		      .plain_mlp = true, .gelu = true, .tied = true } },
};

/* Read by nothing here: they change neither memory nor compute. */
static const char *const skipped[] = {
	"_name_or_path", "architectures", "torch_dtype", "transformers_version",
	"bos_token_id", "eos_token_id", "pad_token_id", "rope_theta",
	"rope_scaling", "rms_norm_eps", "layer_norm_epsilon", "initializer_range",
	"max_position_embeddings", "use_cache", "attention_dropout",
	"hidden_dropout", "attention_bias", "mlp_bias", "pretraining_tp",
	"output_router_logits", "router_aux_loss_coef", "router_jitter_noise",
	"norm_topk_prob", "decoder_sparse_step", "max_window_layers",
	"bias", "alibi", "new_decoder_architecture", "multi_query",
	"hidden_activation", NULL,
};

struct key {
	const char *name;
	size_t off;		/* of a uint32_t or bool in struct model */
	bool is_bool;
	uint32_t max;
};

#define U32(n, f, mx)	{ n, offsetof(struct model, f), false, mx }
#define BOOL(n, f)	{ n, offsetof(struct model, f), true, 1 }

static const struct key keys[] = {
	U32("hidden_size", hidden, 1U << 16),
	U32("num_hidden_layers", layers, 1024),
	U32("num_attention_heads", heads, 1024),
	U32("num_key_value_heads", kv_heads, 1024),
	U32("head_dim", head_dim, 1024),
	U32("intermediate_size", ffn, 1U << 20),
	U32("vocab_size", vocab, 1U << 22),
	U32("num_local_experts", experts, 64),
	U32("num_experts", experts, 64),
	U32("num_experts_per_tok", top_k, 8),
	U32("moe_intermediate_size", expert_ffn, 1U << 20),
	U32("shared_expert_intermediate_size", shared_ffn, 1U << 20),
	U32("sliding_window", window, 1U << 24),
	BOOL("tie_word_embeddings", tied),
	BOOL("parallel_attn", parallel),
	BOOL("gated_mlp", plain_mlp),	/* stored inverted, below */
};

static bool in_list(const char *const *l, const char *s)
{
	for (; *l; l++)
		if (!strcmp(*l, s))
			return true;
	return false;
}

static int set_key(struct model *m, const struct key *k, json_object *v,
		   const char *file, struct hp_err *e)
{
	char *dst = (char *)m + k->off;
	int64_t n;

	if (k->is_bool) {
		if (!json_object_is_type(v, json_type_boolean))
			return hp_errf(e, "%s: %s must be true or false", file, k->name);
		*(bool *)dst = json_object_get_boolean(v);
		if (!strcmp(k->name, "gated_mlp"))
			*(bool *)dst = !*(bool *)dst;
		return 0;
	}
	/* "sliding_window": null is how a config says it has none */
	if (json_object_is_type(v, json_type_null) && !strcmp(k->name, "sliding_window")) {
		*(uint32_t *)dst = 0;
		return 0;
	}
	n = json_object_get_int64(v);
	if (!json_object_is_type(v, json_type_int) || n < 0 || n > k->max)
		return hp_errf(e, "%s: %s must be an integer in 0..%u", file,
			       k->name, k->max);
	*(uint32_t *)dst = (uint32_t)n;
	return 0;
}

static const struct family *family_of(json_object *root, const char *file,
				      struct hp_err *e)
{
	char known[200] = "";
	size_t i, len = 0;
	json_object *t;
	const char *s;

	if (!json_object_object_get_ex(root, "model_type", &t))
		return &families[0];
	s = json_object_is_type(t, json_type_string) ? json_object_get_string(t) : "";
	for (i = 0; i < ARRAY_SIZE(families); i++) {
		if (!strcmp(s, families[i].type))
			return &families[i];
		len += snprintf(known + len, sizeof(known) - len, "%s%s",
				i ? ", " : "", families[i].type);
	}
	hp_errf(e, "%s: unknown model_type \"%.40s\" (known: %s)", file, s, known);
	return NULL;
}

static int read_keys(struct model *m, json_object *root, const char *file,
		     struct hp_err *e)
{
	bool window_off = false;
	size_t i;

	json_object_object_foreach(root, key, v) {
		if (!strcmp(key, "model_type") || in_list(skipped, key))
			continue;
		if (!strcmp(key, "use_sliding_window")) {
			if (!json_object_is_type(v, json_type_boolean))
				return hp_errf(e, "%s: use_sliding_window must be true or false",
					       file);
			window_off = !json_object_get_boolean(v);
			continue;
		}
		if (!strcmp(key, "hidden_act")) {
			const char *a = json_object_get_string(v);

			if (!json_object_is_type(v, json_type_string) ||
			    (strcmp(a, "silu") && strncmp(a, "gelu", 4)))
				return hp_errf(e, "%s: hidden_act must be \"silu\" or \"gelu\" (or a gelu variant)",
					       file);
			m->gelu = !strncmp(a, "gelu", 4);
			continue;
		}
		for (i = 0; i < ARRAY_SIZE(keys); i++)
			if (!strcmp(key, keys[i].name))
				break;
		if (i == ARRAY_SIZE(keys))
			return hp_errf(e, "%s: unknown key \"%.60s\" (Documentation/planner.md lists the keys read)",
				       file, key);
		if (set_key(m, &keys[i], v, file, e))
			return -EINVAL;
	}
	if (window_off)
		m->window = 0;
	return 0;
}

/* Shapes no model has: each refused naming the keys involved. */
static int check_shape(const struct model *m, const char *file,
		       struct hp_err *e)
{
	if (!m->hidden || !m->layers || !m->heads || !m->kv_heads ||
	    !m->ffn || !m->vocab)
		return hp_errf(e, "%s: hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads, intermediate_size and vocab_size must be above 0",
			       file);
	if (!m->head_dim && m->hidden % m->heads)
		return hp_errf(e, "%s: num_attention_heads (%u) does not divide hidden_size (%u); give head_dim",
			       file, m->heads, m->hidden);
	if (m->heads % m->kv_heads)
		return hp_errf(e, "%s: num_key_value_heads (%u) does not divide num_attention_heads (%u)",
			       file, m->kv_heads, m->heads);
	if (m->experts == 1 || (m->experts && (!m->top_k || m->top_k > m->experts)))
		return hp_errf(e, "%s: num_experts_per_tok (%u) must be in 1..num_local_experts (%u), and experts at least 2",
			       file, m->top_k, m->experts);
	if (!m->experts && (m->shared_ffn || m->expert_ffn))
		return hp_errf(e, "%s: shared_expert_intermediate_size and moe_intermediate_size need experts",
			       file);
	return 0;
}

/* "x/Mistral-7B/config.json" is "Mistral-7B"; "configs/gemma-7b.json" "gemma-7b". */
static void name_of(const char *path, char *buf, size_t len)
{
	const char *base = strrchr(path, '/'), *end;

	base = base ? base + 1 : path;
	if (!strcmp(base, "config.json") && base > path + 1) {
		end = base - 1;
		for (base = end; base > path && base[-1] != '/'; base--)
			;
		snprintf(buf, len, "%.*s", (int)(end - base), base);
		return;
	}
	end = strstr(base, ".json");
	snprintf(buf, len, "%.*s", end ? (int)(end - base) : (int)strlen(base), base);
}

int model_from_config(const char *path, struct model *m, char *names,
		      size_t len, struct hp_err *e)
{
	const struct family *f;
	json_object *root;
	struct stat st;
	int ret = -EINVAL;

	/* A config is a small file: not a directory, a pipe or /dev/zero. */
	if (stat(path, &st))
		return hp_errf(e, "%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode) || st.st_size > (1 << 20))
		return hp_errf(e, "%s: not a regular file of at most 1 MiB", path);
	root = json_object_from_file(path);
	if (!root)
		return hp_errf(e, "%s: %s", path, json_util_get_last_err() ?
			       json_util_get_last_err() : "cannot read it as JSON");
	if (!json_object_is_type(root, json_type_object)) {
		hp_errf(e, "%s: not a JSON object", path);
		goto out;
	}
	f = family_of(root, path, e);
	if (!f)
		goto out;
	*m = f->m;
	if (read_keys(m, root, path, e) || check_shape(m, path, e))
		goto out;
	name_of(path, names, len / 2);
	snprintf(names + len / 2, len / 2, "%s-family model from %s", f->type,
		 path);
	m->name = names;
	m->desc = names + len / 2;
	ret = 0;
out:
	json_object_put(root);
	return ret;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the schedule loader and validator: any input must
 * be either refused with a message or loaded into tables whose every
 * index is in range.  Built with clang -fsanitize=fuzzer,address,undefined
 * by `make fuzz`.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <hyper/hyper.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void walk(const struct hyper_schedule *s)
{
	struct hyper_schedule_info info;
	struct hyper_tensor_info ti;
	struct hyper_step_info si;

	if (hyper_schedule_info(s, &info))
		abort();
	for (uint32_t i = 0; i < info.nr_tensors; i++) {
		if (hyper_schedule_tensor(s, i, &ti) || !ti.id || !ti.bytes ||
		    hyper_schedule_find(s, ti.id) != (int)i)
			abort();
		hyper_schedule_ext(s, HYPER_EXT_TENSOR, i, "x-a");
	}
	for (uint32_t i = 0; i < info.nr_steps; i++) {
		if (hyper_schedule_step(s, i, &si) || !si.op)
			abort();
		for (uint32_t j = 0; j < si.nr_uses; j++)
			if (si.uses[j] >= info.nr_tensors)
				abort();
		for (uint32_t j = 0; j < si.nr_defines; j++)
			if (si.defines[j] >= info.nr_tensors)
				abort();
		for (uint32_t j = 0; j < si.nr_before; j++)
			if (si.before[j].tensor >= info.nr_tensors)
				abort();
		for (uint32_t j = 0; j < si.nr_after; j++)
			if (si.after[j].tensor >= info.nr_tensors)
				abort();
		hyper_schedule_ext(s, HYPER_EXT_STEP, i, "x-gemm");
	}
	if ((info.flags & HYPER_SCHED_BUDGET) && info.peak_device_bytes > info.budget_bytes)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hyper_schedule *s;
	char err[256];
	int ret;

	err[0] = 'X';
	ret = hyper_schedule_parse((const char *)data, size, &s, err, sizeof(err));
	if (ret) {
		/* A refusal always says why. */
		if (s || !err[0] || err[0] == 'X' || !memchr(err, '\0', sizeof(err)))
			abort();
		return 0;
	}
	walk(s);
	hyper_schedule_free(s);
	return 0;
}

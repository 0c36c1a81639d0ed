/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libhyperplan: plan the transfers of a compute graph so that it fits a
 * device-memory budget, or uses the least memory for a slowdown, and hand
 * the plan to libhyper.  See Documentation/planner.md for the model and
 * hyper_plan_run(3) for the entry point.
 *
 * Every function that can fail returns 0 (or a non-negative index) on
 * success and a negative errno on failure, with a one-line message in the
 * caller's buffer or the graph's last error; none of them exits or prints
 * (out of memory is the exception: the planner aborts, see BUGS in
 * hyper_plan_run(3)).  Structures passed in have reserved fields that
 * must be zero, so that a zeroed structure means defaults.  Handles are
 * opaque; nothing is global, so threads may plan different graphs.
 */
#ifndef HYPER_PLAN_H
#define HYPER_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include <hyper/hyper.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HYPER_PLAN_VERSION	1

struct hyper_plan_graph;
struct hyper_plan;

/* ---- graph ------------------------------------------------------------ */

/* struct hyper_plan_tensor.flags */
#define HYPER_PLAN_LIVE_IN	(1U << 0)	/* holds data when the graph starts */
#define HYPER_PLAN_LIVE_OUT	(1U << 1)	/* its last value outlives the graph */
#define HYPER_PLAN_PIN		(1U << 2)	/* never leaves the device */
/*
 * Which of LIVE_IN and LIVE_OUT the caller decides.  One it does not
 * comes from the kind (weights and optimizer state: both; KV cache:
 * LIVE_OUT), as for a graph file's tensor without that key.
 */
#define HYPER_PLAN_LIVE_IN_SET	(1U << 29)	/* LIVE_IN is as given */
#define HYPER_PLAN_LIVE_OUT_SET	(1U << 30)	/* LIVE_OUT is as given */
#define HYPER_PLAN_EXPLICIT	(1U << 31)	/* both are as given */

/**
 * struct hyper_plan_tensor - a tensor of the graph
 * @id:		unique, 1..127 bytes of UTF-8 (copied)
 * @bytes:	1..2^48
 * @kind:	enum hyper_tensor_kind
 * @flags:	HYPER_PLAN_LIVE_IN, _LIVE_OUT, _PIN, _LIVE_IN_SET,
 *		_LIVE_OUT_SET, _EXPLICIT
 */
struct hyper_plan_tensor {
	const char *id;
	uint64_t bytes;
	uint32_t kind;
	uint32_t flags;
	uint64_t reserved[4];
};

/**
 * struct hyper_plan_op - an operator, in a valid initial order
 * @id:		unique, 1..127 bytes of UTF-8 (copied)
 * @compute_ns:	its time on the profile the graph is planned for
 * @inputs:	tensor indices it reads (from hyper_plan_graph_add_tensor())
 * @outputs:	tensor indices it writes
 * @gemm_m, @gemm_n, @gemm_k: a matrix multiply's shape, all 0 if none
 * @flops, @bytes: its cost; when either is set, the profile's roofline
 *		times it and @compute_ns is ignored (Documentation/profiles.md)
 */
struct hyper_plan_op {
	const char *id;
	uint64_t compute_ns;
	const uint32_t *inputs;
	const uint32_t *outputs;
	uint32_t nr_inputs;
	uint32_t nr_outputs;
	uint32_t gemm_m, gemm_n, gemm_k;
	uint32_t reserved0;
	double flops;
	double bytes;
	uint64_t reserved[4];
};

int hyper_plan_graph_new(const char *name, struct hyper_plan_graph **graphp);
int hyper_plan_graph_load(const char *path, struct hyper_plan_graph **graphp,
			  char *err, size_t errlen);
void hyper_plan_graph_free(struct hyper_plan_graph *graph);
int hyper_plan_graph_add_tensor(struct hyper_plan_graph *graph,
				const struct hyper_plan_tensor *tensor);
int hyper_plan_graph_add_op(struct hyper_plan_graph *graph,
			    const struct hyper_plan_op *op);
const char *hyper_plan_graph_last_error(const struct hyper_plan_graph *graph);

/* ---- planning --------------------------------------------------------- */

enum hyper_plan_policy {
	HYPER_PLAN_POLICY_PLAN		= 0,	/* the planner (default) */
	HYPER_PLAN_POLICY_NONE		= 1,	/* no offload */
	HYPER_PLAN_POLICY_DISTANCE	= 2,	/* baseline: distance heuristic */
	HYPER_PLAN_POLICY_GREEDY	= 3,	/* baseline: evict furthest use */
};

/* struct hyper_plan_opts.flags */
#define HYPER_PLAN_SLOWDOWN	(1U << 0)	/* max_slowdown is set (else 1%) */
#define HYPER_PLAN_NO_REORDER	(1U << 1)	/* keep the graph's order */
#define HYPER_PLAN_BOUND	(1U << 2)	/* compute the lower bound too */
#define HYPER_PLAN_FLAGS_MASK	(HYPER_PLAN_SLOWDOWN | HYPER_PLAN_NO_REORDER | \
				 HYPER_PLAN_BOUND)

/**
 * struct hyper_plan_opts - what to plan for; all-zero means defaults
 * @profile:		built-in profile name (hyper-plan --list-profiles),
 *			NULL for "supernode-npu"
 * @profile_file:	or a profile JSON file (Documentation/profiles.md)
 * @budget_bytes:	least slowdown within this device budget; 0: instead
 *			the lowest peak within @max_slowdown
 * @max_slowdown:	fraction over no offload (0.01: 1%), with
 *			HYPER_PLAN_SLOWDOWN
 * @policy:		enum hyper_plan_policy
 * @flags:		HYPER_PLAN_*
 * @reserved:		must be zero
 */
struct hyper_plan_opts {
	const char *profile;
	const char *profile_file;
	uint64_t budget_bytes;
	double max_slowdown;
	uint32_t policy;
	uint32_t flags;
	uint64_t reserved[6];
};

int hyper_plan_run(struct hyper_plan_graph *graph,
		   const struct hyper_plan_opts *opts, struct hyper_plan **planp,
		   char *err, size_t errlen);
void hyper_plan_free(struct hyper_plan *plan);

/**
 * struct hyper_plan_prediction - the plan replayed on the profile
 * @peak_device_bytes:	its peak device residency
 * @baseline_peak_bytes: the peak without offload
 * @bound_bytes:	no schedule of the graph does better at this
 *			slowdown (with HYPER_PLAN_BOUND and no budget), else 0
 * @stall_ns:		time compute waits for transfers
 * @makespan_ns:	time to run the graph
 * @compute_ns:		compute time alone
 * @h2d_bytes, @d2h_bytes: bytes moved each way
 * @slowdown:		makespan / compute - 1
 * @policy:		enum hyper_plan_policy whose schedule this is: the
 *			planner returns a baseline's when that one is better
 * @arena_over:		1 if the schedule's device arena (residency plus
 *			what placement loses to holes and alignment) needs
 *			more than budget_bytes even planned under a lower
 *			residency budget: the schedule then carries no
 *			arena offsets (no HYPER_SCHED_ARENA) and running it
 *			needs more device memory than the budget; else 0
 * @arena_bytes:	the device arena the schedule needs: laid out by the
 *			planner (its offsets are in the schedule) or, with
 *			@arena_over, what the layout would have needed
 */
struct hyper_plan_prediction {
	uint64_t peak_device_bytes;
	uint64_t baseline_peak_bytes;
	uint64_t bound_bytes;
	uint64_t stall_ns;
	uint64_t makespan_ns;
	uint64_t compute_ns;
	uint64_t h2d_bytes;
	uint64_t d2h_bytes;
	double slowdown;
	uint32_t policy;
	uint32_t arena_over;
	uint64_t arena_bytes;
	uint64_t reserved[5];
};

int hyper_plan_prediction(const struct hyper_plan *plan,
			  struct hyper_plan_prediction *pred);

/* ---- results ---------------------------------------------------------- */

int hyper_plan_schedule(const struct hyper_plan *plan,
			struct hyper_schedule **schedp, char *err,
			size_t errlen);
int hyper_plan_write_json(const struct hyper_plan *plan, const char *path,
			  char *err, size_t errlen);

/* ---- this machine's profile (HYPERPLAN_1.1) --------------------------- */

/* struct hyper_plan_measure_opts.flags */
#define HYPER_PLAN_MEASURE_ALONE (1U << 0)	/* the link with nothing else running */
#define HYPER_PLAN_MEASURE_FLAGS_MASK	HYPER_PLAN_MEASURE_ALONE

/**
 * struct hyper_plan_measure_opts - how to measure; all-zero means defaults
 * @copy:		the copy path to measure, as the run sets it with
 *			hyper_set_copy_engine(); NULL for libhyper's default
 *			(on the shmem backend: one copy worker, unpinned)
 * @compute_cpus:	CPUs of the executor's thread and its SGEMM
 * @nr_compute_cpus:	entries in @compute_cpus; 0 leaves it unpinned
 * @flags:		HYPER_PLAN_MEASURE_*
 * @link_bytes:		one transfer of the bandwidth figures: 4 KiB to
 *			1 GiB, a multiple of 4 KiB; 0 for 16 MiB
 * @runs:		the link's figures are medians of this many, 1 to
 *			101; 0 for 7
 * @reserved:		must be zero
 */
struct hyper_plan_measure_opts {
	const struct hyper_copy_opts *copy;
	const int *compute_cpus;
	uint32_t nr_compute_cpus;
	uint32_t flags;
	uint64_t link_bytes;
	uint32_t runs;
	uint32_t reserved0;
	uint64_t reserved[6];
};

/**
 * struct hyper_plan_profile - a profile (Documentation/profiles.md)
 * @name, @desc:	"this-machine" and how it was measured
 * @device_bytes ... @latency_ns: the figures the planner uses, named as
 *			in a profile file; the link's are measured with
 *			compute running unless HYPER_PLAN_MEASURE_ALONE
 * @h2d_alone_bytes_per_s, @d2h_alone_bytes_per_s, @latency_alone_ns:
 *			the same link with nothing else running
 * @engine:		enum hyper_copy_engine that was measured
 */
struct hyper_plan_profile {
	char name[32];
	char desc[96];
	double device_bytes;
	double mem_bytes_per_s;
	double flops;
	double h2d_bytes_per_s;
	double d2h_bytes_per_s;
	double latency_ns;
	double h2d_alone_bytes_per_s;
	double d2h_alone_bytes_per_s;
	double latency_alone_ns;
	uint32_t engine;
	uint32_t reserved0;
	uint64_t reserved[6];
};

int hyper_plan_profile_measure(const struct hyper_plan_measure_opts *opts,
			       struct hyper_plan_profile *prof, char *err,
			       size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* HYPER_PLAN_H */

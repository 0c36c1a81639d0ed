/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The residency rules, defined once: what each cache operator and each
 * step's uses and defines require of a tensor's residency, and the state
 * they leave it in (Documentation/schedule-format.md, "Validation").
 *
 * libhyper's validator replays schedules on these rules; the planner's
 * simulator, its emitter and its greedy policy use the same transitions,
 * so that what the planner believes and what libhyper checks cannot
 * drift apart.  Installed beside <hyper/hyper.h>; a program that replays
 * schedules itself includes it.
 */
#ifndef HYPER_RESIDENCY_H
#define HYPER_RESIDENCY_H

#include <stddef.h>
#include <stdint.h>

#include <hyper/vocab.h>

/* A tensor's residency state is a set of these bits. */
#define HYPER_RES_DEVICE	(1U << 0)	/* a device copy exists */
#define HYPER_RES_POOL		(1U << 1)	/* the pool copy is current */
#define HYPER_RES_DETACHED	(1U << 2)	/* detached once: for messages */

/*
 * What can happen to a tensor: the three cache operators keep their
 * numbers (enum hyper_cache_op); a step reads its uses and writes its
 * defines.
 */
enum hyper_res_event {
	HYPER_RES_PREFETCH	= HYPER_OP_PREFETCH,
	HYPER_RES_STORE		= HYPER_OP_STORE,
	HYPER_RES_DETACH	= HYPER_OP_DETACH,
	HYPER_RES_USE		= 4,
	HYPER_RES_DEFINE	= 5,
};

/* Why a transition is refused; 0 when it is allowed. */
enum hyper_res_refusal {
	HYPER_RES_OK		= 0,
	HYPER_RES_RESIDENT	= 1,	/* prefetch of a resident tensor */
	HYPER_RES_NO_POOL	= 2,	/* prefetch without a current pool copy */
	HYPER_RES_NOT_RESIDENT	= 3,	/* store, detach or use of a tensor
					 * without a device copy */
	HYPER_RES_AFTER_DETACH	= 4,	/* the same, after its detach */
	HYPER_RES_BAD_EVENT	= 5,	/* not an enum hyper_res_event */
};

/* The state a tensor starts a schedule in, from its enum hyper_home. */
static inline uint8_t hyper_residency_start(uint32_t home)
{
	if (home == HYPER_HOME_POOL)
		return HYPER_RES_POOL;
	if (home == HYPER_HOME_DEVICE)
		return HYPER_RES_DEVICE;
	return 0;
}

/* Whether @event is allowed in @state: 0, or an enum hyper_res_refusal. */
static inline int hyper_residency_check(uint8_t state, uint32_t event)
{
	switch (event) {
	case HYPER_RES_PREFETCH:
		if (state & HYPER_RES_DEVICE)
			return HYPER_RES_RESIDENT;
		return state & HYPER_RES_POOL ? HYPER_RES_OK : HYPER_RES_NO_POOL;
	case HYPER_RES_STORE:
	case HYPER_RES_DETACH:
	case HYPER_RES_USE:
		if (state & HYPER_RES_DEVICE)
			return HYPER_RES_OK;
		return state & HYPER_RES_DETACHED ? HYPER_RES_AFTER_DETACH :
						    HYPER_RES_NOT_RESIDENT;
	case HYPER_RES_DEFINE:
		return HYPER_RES_OK;	/* gets device memory if it has none */
	}
	return HYPER_RES_BAD_EVENT;
}

/*
 * The state @event leaves behind, without checking it: for a planner
 * deciding what to do.  A store makes the pool copy current; a define
 * makes it stale.
 */
static inline uint8_t hyper_residency_next(uint8_t state, uint32_t event)
{
	switch (event) {
	case HYPER_RES_PREFETCH:
		return (uint8_t)(state | HYPER_RES_DEVICE);
	case HYPER_RES_STORE:
		return (uint8_t)(state | HYPER_RES_POOL);
	case HYPER_RES_DETACH:
		return (uint8_t)((state & ~HYPER_RES_DEVICE) | HYPER_RES_DETACHED);
	case HYPER_RES_DEFINE:
		return (uint8_t)((state | HYPER_RES_DEVICE) & ~HYPER_RES_POOL);
	}
	return state;
}

/* Checks @event, then applies it to *@state: 0 or an enum hyper_res_refusal. */
static inline int hyper_residency_step(uint8_t *state, uint32_t event)
{
	int why = hyper_residency_check(*state, event);

	if (!why)
		*state = hyper_residency_next(*state, event);
	return why;
}

/*
 * The reason for a refusal, worded to follow "<op> of tensor \"x\"", as
 * libhyper's validator writes it; NULL for HYPER_RES_OK.
 */
static inline const char *hyper_residency_reason(int why)
{
	switch (why) {
	case HYPER_RES_RESIDENT:
		return "which is already resident";
	case HYPER_RES_NO_POOL:
		return "which has no pool copy";
	case HYPER_RES_NOT_RESIDENT:
		return "which is not resident";
	case HYPER_RES_AFTER_DETACH:
		return "after its detach (not resident)";
	case HYPER_RES_BAD_EVENT:
		return "with an unknown cache op";
	}
	return NULL;
}

/* The name of an event: a cache op's, "use" or "define". */
static inline const char *hyper_residency_event_name(uint32_t event)
{
	if (event == HYPER_RES_USE)
		return "use";
	if (event == HYPER_RES_DEFINE)
		return "define";
	return hyper_cache_op_name(event);
}

#endif /* HYPER_RESIDENCY_H */

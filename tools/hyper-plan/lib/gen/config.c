// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A model from a Hugging Face style config.json, as its model card
 * publishes it.  "model_type" picks the family whose defaults (those of
 * its transformers config class) fill the keys the file leaves out; the
 * keys below override them.  Every other key is one of three kinds:
 * ignored, because it changes neither memory nor compute (token ids,
 * rope, dropout, epsilons...: listed in m->ignored, which hyper-plan -v
 * prints); refused unless it has the value that leaves the graph as
 * drawn (naming what it would change); or unknown, and refused, so that
 * a shape the generators cannot draw is never planned as another one.
 */
#include <errno.h>
#include <string.h>

#include <json-c/json.h>

#include "gen/model.h"

struct family {
	const char *type;
	struct model m;
	bool kv_is_heads;	/* no num_key_value_heads: one per head */
};

#define SEQ(L, h, nh, kv, f, V)						\
	.layers = L, .hidden = h, .heads = nh, .kv_heads = kv, .ffn = f,	\
	.vocab = V

static const struct family families[] = {
	{ .type = "llama", .m = { SEQ(32, 4096, 32, 32, 11008, 32000) }, .kv_is_heads = true },
	{ .type = "mistral", .m = { SEQ(32, 4096, 32, 8, 14336, 32000), .window = 4096 } },
	{ .type = "mixtral", .m = { SEQ(32, 4096, 32, 8, 14336, 32000), .experts = 8,
		       .top_k = 2 } },
	{ .type = "qwen2", .m = { SEQ(32, 4096, 32, 32, 22016, 151936), .qkv_bias = true } },
	{ .type = "qwen2_moe", .m = { SEQ(24, 2048, 16, 16, 5632, 151936), .experts = 60,
			 .top_k = 4, .expert_ffn = 1408, .shared_ffn = 5632,
			 .qkv_bias = true, .shared_gate = true } },
	{ .type = "gemma", .m = { SEQ(28, 3072, 16, 16, 24576, 256000), .head_dim = 256,
		     .tied = true, .gelu = true } },
	{ .type = "gemma2", .m = { SEQ(26, 2304, 8, 4, 9216, 256000), .head_dim = 256,
		      .tied = true, .gelu = true, .sandwich = true } },
	{ .type = "falcon", .m = { SEQ(32, 4544, 71, 1, 4 * 4544, 65024), .parallel = true,
		      .plain_mlp = true, .gelu = true, .tied = true,
		      .ln_bias = true } },
	{ .type = "phi3", .m = { SEQ(32, 3072, 32, 32, 8192, 32064) }, .kv_is_heads = true },
	{ .type = "gpt2", .m = { SEQ(12, 768, 12, 12, 3072, 50257), .max_pos = 1024,
		    .tied = true, .plain_mlp = true, .gelu = true,
		    .qkv_bias = true, .o_bias = true, .mlp_bias = true,
		    .ln_bias = true } },
	{ .type = "olmoe", .m = { SEQ(16, 2048, 16, 16, 2048, 50304), .experts = 64,
		     .top_k = 8, .qk_norm = true }, .kv_is_heads = true },
	{ .type = "deepseek_v2", .m = { SEQ(30, 4096, 32, 32, 11008, 102400),
			   .expert_ffn = 1407, .kv_lora = 512, .q_lora = 1536,
			   .qk_nope = 128, .qk_rope = 64, .v_head = 128 } },
};

/*
 * Read by nothing here: they change neither memory nor compute.  @why,
 * when set, says what a reader might think they change.
 */
static const struct {
	const char *name, *why;
} ignored[] = {
	{ .name = "_name_or_path" }, { .name = "architectures" }, { .name = "auto_map" },
	{ .name = "transformers_version" }, { .name = "model_type" },
	{ .name = "torch_dtype", .why = "the element size is --dtype" },
	{ .name = "bos_token_id" }, { .name = "eos_token_id" }, { .name = "pad_token_id" },
	{ .name = "initializer_range" }, { .name = "use_cache" },
	{ .name = "max_position_embeddings", .why = "the sequence is --seq" },
	{ .name = "original_max_position_embeddings" }, { .name = "n_ctx" },
	{ .name = "rope_theta" }, { .name = "rope_scaling" }, { .name = "use_mrope" },
	{ .name = "partial_rotary_factor" },
	{ .name = "rms_norm_eps" }, { .name = "layer_norm_epsilon" }, { .name = "layer_norm_eps" },
	{ .name = "attention_dropout" }, { .name = "hidden_dropout" }, { .name = "attn_pdrop" },
	{ .name = "embd_pdrop" }, { .name = "resid_pdrop" }, { .name = "summary_activation" },
	{ .name = "summary_first_dropout" }, { .name = "summary_proj_to_labels" },
	{ .name = "summary_type" }, { .name = "summary_use_proj" },
	{ .name = "task_specific_params" }, { .name = "pretraining_tp" },
	{ .name = "scale_attn_weights" }, { .name = "scale_attn_by_inverse_layer_idx" },
	{ .name = "reorder_and_upcast_attn" }, { .name = "clip_qkv" },
	{ .name = "query_pre_attn_scalar", .why = "a scale factor of the scores" },
	{ .name = "attn_logit_softcapping" }, { .name = "final_logit_softcapping" },
	{ .name = "cache_implementation" }, { .name = "sliding_window_size" },
	{ .name = "output_router_logits" }, { .name = "router_aux_loss_coef" },
	{ .name = "router_jitter_noise" }, { .name = "aux_loss_alpha" }, { .name = "seq_aux" },
	{ .name = "norm_topk_prob" }, { .name = "routed_scaling_factor" },
	{ .name = "scoring_func", .why = "routing is drawn from --seed" },
	{ .name = "topk_method", .why = "routing is drawn from --seed" },
	{ .name = "n_group", .why = "routing is drawn from --seed" },
	{ .name = "topk_group", .why = "routing is drawn from --seed" },
};

/*
 * Keys the graph cannot follow but for one value: any other is refused,
 * naming what it would change.
 */
enum want { W_FALSE, W_ONE, W_NONE, W_EMPTY };

static const struct {
	const char *name;
	enum want ok;
	const char *changes;
} fixed[] = {
	{ "apply_residual_connection_post_layernorm", W_FALSE,
	  "the residual: each block would add its norm's output, not its input" },
	{ "alibi", W_FALSE, "attention: ALiBi position biases" },
	{ "add_cross_attention", W_FALSE,
	  "the layers: each would gain a cross-attention block" },
	{ "is_encoder_decoder", W_FALSE, "the model: an encoder as well" },
	{ "moe_layer_freq", W_ONE, "which layers are MoE (every Nth)" },
	{ "decoder_sparse_step", W_ONE, "which layers are MoE (every Nth)" },
	{ "mlp_only_layers", W_EMPTY, "which layers are MoE" },
	{ "num_nextn_predict_layers", W_NONE,
	  "the layers: multi-token prediction modules" },
	{ "quantization_config", W_NONE, "every weight's bytes (quantized)" },
	{ "layer_types", W_NONE, "attention, layer by layer" },
	{ "use_qk_norm", W_FALSE, "attention: norms of q and k" },
};

enum kind { K_U32, K_U32_NULL, K_BOOL, K_NOT };

struct key {
	const char *name;
	size_t off;		/* of a uint32_t or bool in struct model */
	enum kind kind;
	uint32_t max;
	const char *only;	/* the family that has the key; NULL: all */
};

#define U32(n, f, mx)	{ n, offsetof(struct model, f), K_U32, mx, NULL }
#define U32N(n, f, mx, o) { n, offsetof(struct model, f), K_U32_NULL, mx, o }
#define FAM(n, f, mx, o) { n, offsetof(struct model, f), K_U32, mx, o }
#define BOOL(n, f)	{ n, offsetof(struct model, f), K_BOOL, 1, NULL }
#define BOOLF(n, f, o)	{ n, offsetof(struct model, f), K_BOOL, 1, o }

/* As many experts as there are expert names; top-k as route() draws. */
#define MAX_EXPERTS	(1U << 16)
#define MAX_TOP_K	64

static const struct key keys[] = {
	U32("hidden_size", hidden, 1U << 16),
	U32("num_hidden_layers", layers, 1024),
	U32("num_attention_heads", heads, 1024),
	U32("num_key_value_heads", kv_heads, 1024),
	U32("head_dim", head_dim, 1024),
	U32("intermediate_size", ffn, 1U << 20),
	U32("vocab_size", vocab, 1U << 22),
	U32("num_local_experts", experts, MAX_EXPERTS),
	U32("num_experts", experts, MAX_EXPERTS),
	U32("num_experts_per_tok", top_k, MAX_TOP_K),
	U32("moe_intermediate_size", expert_ffn, 1U << 20),
	U32("shared_expert_intermediate_size", shared_ffn, 1U << 20),
	U32N("sliding_window", window, 1U << 24, NULL),
	BOOL("tie_word_embeddings", tied),
	BOOL("parallel_attn", parallel),
	{ "gated_mlp", offsetof(struct model, plain_mlp), K_NOT, 1, NULL },
	BOOL("mlp_bias", mlp_bias),
	/* gpt2's own names */
	FAM("n_embd", hidden, 1U << 16, "gpt2"),
	FAM("n_layer", layers, 1024, "gpt2"),
	FAM("n_head", heads, 1024, "gpt2"),
	U32N("n_inner", ffn, 1U << 20, "gpt2"),
	FAM("n_positions", max_pos, 1U << 24, "gpt2"),
	/* falcon's */
	FAM("num_kv_heads", kv_heads, 1024, "falcon"),
	U32N("ffn_hidden_size", ffn, 1U << 20, "falcon"),
	/* deepseek_v2's */
	FAM("n_routed_experts", experts, MAX_EXPERTS, "deepseek_v2"),
	FAM("first_k_dense_replace", first_dense, 1024, "deepseek_v2"),
	FAM("kv_lora_rank", kv_lora, 1U << 16, "deepseek_v2"),
	U32N("q_lora_rank", q_lora, 1U << 16, "deepseek_v2"),
	FAM("qk_nope_head_dim", qk_nope, 1024, "deepseek_v2"),
	FAM("qk_rope_head_dim", qk_rope, 1024, "deepseek_v2"),
	FAM("v_head_dim", v_head, 1024, "deepseek_v2"),
};

/* What read_keys() learns besides the fields, for finish(). */
struct rd {
	const struct family *f;
	const char *file;
	bool window_off, window_on, kv_given, ffn_given, multi_query, new_arch;
	uint32_t n_shared;	/* deepseek_v2: shared experts */
	int64_t window_layers;	/* max_window_layers; -1: not given */
	char *notes;		/* m->ignored, being written */
	size_t len, used;
};

static void note(struct rd *r, const char *key, const char *why)
{
	int n;

	if (r->used + 4 >= r->len)
		return;
	n = snprintf(r->notes + r->used, r->len - r->used, "%s%s%s%s%s",
		     r->used ? ", " : "", key, why ? " (" : "", why ? why : "",
		     why ? ")" : "");
	if (n < 0 || (size_t)n >= r->len - r->used) {
		/* the list is cut: say so rather than end mid-word */
		snprintf(r->notes + r->len - 4, 4, "...");
		r->used = r->len;
		return;
	}
	r->used += (size_t)n;
}

static int set_key(struct model *m, const struct key *k, json_object *v,
		   const char *file, struct hp_err *e)
{
	char *dst = (char *)m + k->off;
	uint64_t n;

	if (k->kind == K_BOOL || k->kind == K_NOT) {
		if (!json_object_is_type(v, json_type_boolean))
			return hyper_plan__errf(e, "%s: %s must be true or false", file, k->name);
		*(bool *)dst = json_object_get_boolean(v) ^ (k->kind == K_NOT);
		return 0;
	}
	/* "sliding_window": null is how a config says it has none */
	if (k->kind == K_U32_NULL && json_object_is_type(v, json_type_null)) {
		*(uint32_t *)dst = 0;
		return 0;
	}
	if (hu_json_u64(v, 0, k->max, &n)) {
		char what[80];

		snprintf(what, sizeof(what), "%s%s", k->name,
			 k->kind == K_U32_NULL ? " (or null)" : "");
		if (e)
			hu_json_int_error(e->msg, sizeof(e->msg), file, what,
					  0, k->max, v);
		return -EINVAL;
	}
	*(uint32_t *)dst = (uint32_t)n;
	return 0;
}

static const struct family *family_of(json_object *root, const char *file,
				      struct hp_err *e)
{
	char known[256] = "";
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
	hyper_plan__errf(e, "%s: unknown model_type \"%.40s\" (known: %s)", file, s, known);
	return NULL;
}

static bool has_value(json_object *v, enum want w)
{
	switch (w) {
	case W_FALSE:
		return json_object_is_type(v, json_type_boolean) &&
		       !json_object_get_boolean(v);
	case W_ONE:
		return json_object_is_type(v, json_type_int) &&
		       json_object_get_int64(v) == 1;
	case W_EMPTY:
		return json_object_is_type(v, json_type_array) &&
		       !json_object_array_length(v);
	case W_NONE:
		return json_object_is_type(v, json_type_null) ||
		       (json_object_is_type(v, json_type_int) &&
			!json_object_get_int64(v));
	}
	return false;
}

static const char *const want_text[] = {
	[W_FALSE] = "false", [W_ONE] = "1", [W_NONE] = "null or 0",
	[W_EMPTY] = "[]",
};

/* Keys whose meaning depends on the family, or on other keys. */
static int special(struct model *m, struct rd *r, const char *key,
		   json_object *v, struct hp_err *e)
{
	bool is_bool = json_object_is_type(v, json_type_boolean);
	bool b = is_bool && json_object_get_boolean(v);

	if (!strcmp(key, "hidden_act") || !strcmp(key, "hidden_activation") ||
	    !strcmp(key, "activation_function")) {
		const char *a = json_object_get_string(v);

		if (!json_object_is_type(v, json_type_string) ||
		    (strcmp(a, "silu") && strcmp(a, "swish") &&
		     strncmp(a, "gelu", 4)))
			return hyper_plan__errf(e, "%s: %s must be \"silu\" or \"gelu\" (or a gelu variant)",
				       r->file, key);
		m->gelu = !strncmp(a, "gelu", 4);
		return 0;
	}
	if ((!strcmp(key, "multi_query") || !strcmp(key, "bias") ||
	     !strcmp(key, "new_decoder_architecture")) &&
	    strcmp(r->f->type, "falcon"))
		return 1;	/* falcon's keys: unknown to the others */
	if (!strcmp(key, "attention_bias") && !strncmp(r->f->type, "qwen2", 5))
		return 1;	/* qwen2's q, k, v always have biases, o never */
	if (!strcmp(key, "use_sliding_window") || !strcmp(key, "multi_query") ||
	    !strcmp(key, "new_decoder_architecture") || !strcmp(key, "bias") ||
	    !strcmp(key, "attention_bias")) {
		if (!is_bool)
			return hyper_plan__errf(e, "%s: %s must be true or false", r->file,
				       key);
		if (!strcmp(key, "use_sliding_window")) {
			r->window_off = !b;
			r->window_on = b;
		} else if (!strcmp(key, "multi_query")) {
			r->multi_query = b;
		} else if (!strcmp(key, "new_decoder_architecture")) {
			r->new_arch = b;
		} else if (!strcmp(key, "bias")) {
			/* falcon: every linear layer */
			m->qkv_bias = m->o_bias = m->mlp_bias = b;
		} else {
			if (b && !strcmp(r->f->type, "deepseek_v2"))
				return hyper_plan__errf(e, "%s: attention_bias true is not modelled for deepseek_v2: it would change the latent projections' weights",
					       r->file);
			m->qkv_bias = m->o_bias = b;
		}
		return 0;
	}
	if (!strcmp(key, "max_window_layers") && !strncmp(r->f->type, "qwen2", 5)) {
		if (!json_object_is_type(v, json_type_int) ||
		    json_object_get_int64(v) < 0)
			return hyper_plan__errf(e, "%s: max_window_layers must be an integer of at least 0",
				       r->file);
		r->window_layers = json_object_get_int64(v);
		return 0;
	}
	if (!strcmp(key, "n_shared_experts") && !strcmp(r->f->type, "deepseek_v2")) {
		int64_t n = json_object_get_int64(v);

		if (json_object_is_type(v, json_type_null))
			n = 0;
		else if (!json_object_is_type(v, json_type_int) || n < 0 || n > 64)
			return hyper_plan__errf(e, "%s: n_shared_experts must be an integer in 0..64, or null",
				       r->file);
		r->n_shared = (uint32_t)n;
		return 0;
	}
	return 1;
}

static int read_keys(struct model *m, struct rd *r, json_object *root,
		     struct hp_err *e)
{
	const char *file = r->file;
	size_t i;
	int ret;

	json_object_object_foreach(root, key, v) {
		for (i = 0; i < ARRAY_SIZE(ignored); i++)
			if (!strcmp(key, ignored[i].name))
				break;
		if (i < ARRAY_SIZE(ignored)) {
			if (strcmp(key, "model_type"))
				note(r, key, ignored[i].why);
			continue;
		}
		/* gemma2 alternates windowed and global layers */
		if (!strcmp(key, "sliding_window") && m->sandwich) {
			note(r, key, "gemma2's every other layer: planned as global attention, an upper bound on the KV cache");
			continue;
		}
		for (i = 0; i < ARRAY_SIZE(fixed); i++)
			if (!strcmp(key, fixed[i].name))
				break;
		if (i < ARRAY_SIZE(fixed)) {
			if (!has_value(v, fixed[i].ok))
				return hyper_plan__errf(e, "%s: %s = %.40s is not modelled: it would change %s (only %s plans)",
					       file, key, json_object_to_json_string(v),
					       fixed[i].changes, want_text[fixed[i].ok]);
			note(r, key, NULL);
			continue;
		}
		ret = special(m, r, key, v, e);
		if (ret <= 0) {
			if (ret)
				return ret;
			continue;
		}
		for (i = 0; i < ARRAY_SIZE(keys); i++)
			if (!strcmp(key, keys[i].name) &&
			    (!keys[i].only || !strcmp(keys[i].only, r->f->type)))
				break;
		if (i == ARRAY_SIZE(keys))
			return hyper_plan__errf(e, "%s: unknown key \"%.60s\" for model_type %s: it may change the graph (Documentation/planner.md lists the keys read and those ignored)",
				       file, key, r->f->type);
		if (set_key(m, &keys[i], v, file, e))
			return -EINVAL;
		if (keys[i].off == offsetof(struct model, kv_heads))
			r->kv_given = true;
		if (keys[i].off == offsetof(struct model, ffn))
			r->ffn_given = m->ffn != 0;
	}
	return 0;
}

/* What the family's config class derives from the keys read. */
static void finish(struct model *m, const struct rd *r)
{
	const char *t = r->f->type;

	/* qwen2's windows are off unless use_sliding_window says */
	if (r->window_off || (!strncmp(t, "qwen2", 5) && !r->window_on))
		m->window = 0;
	if (!strcmp(t, "falcon")) {
		/* FalconAttention: one KV head unless new or not multi-query */
		if (r->new_arch || !r->multi_query)
			m->kv_heads = r->kv_given ? m->kv_heads : m->heads;
		else
			m->kv_heads = 1;
		if (r->new_arch)
			m->parallel = m->two_ln = true;
	} else if (!strcmp(t, "gpt2")) {
		m->kv_heads = m->heads;
	} else if (!r->kv_given && r->f->kv_is_heads) {
		m->kv_heads = m->heads;
	}
	if ((!strcmp(t, "falcon") || !strcmp(t, "gpt2")) && !r->ffn_given)
		m->ffn = 4 * m->hidden;
	if (!strcmp(t, "deepseek_v2"))
		m->shared_ffn = r->n_shared * m->expert_ffn;
	if (m->kv_lora)		/* MLA: every head reads the one latent */
		m->kv_heads = m->heads;
	if (!m->experts)	/* a dense model: the MoE keys shape nothing */
		m->expert_ffn = m->shared_ffn = m->first_dense = 0;
}

/* Shapes no model has: each refused naming the keys involved. */
static int check_shape(const struct model *m, const char *file,
		       struct hp_err *e)
{
	if (!m->hidden || !m->layers || !m->heads || !m->kv_heads ||
	    !m->ffn || !m->vocab)
		return hyper_plan__errf(e, "%s: hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads, intermediate_size and vocab_size must be above 0",
			       file);
	if (!m->head_dim && !m->kv_lora && m->hidden % m->heads)
		return hyper_plan__errf(e, "%s: num_attention_heads (%u) does not divide hidden_size (%u); give head_dim",
			       file, m->heads, m->hidden);
	if (m->heads % m->kv_heads)
		return hyper_plan__errf(e, "%s: num_key_value_heads (%u) does not divide num_attention_heads (%u)",
			       file, m->kv_heads, m->heads);
	if (m->experts == 1 || (m->experts && (!m->top_k || m->top_k > m->experts)))
		return hyper_plan__errf(e, "%s: num_experts_per_tok (%u) must be in 1..num_local_experts (%u), and experts at least 2",
			       file, m->top_k, m->experts);
	if (m->experts && m->first_dense >= m->layers)
		return hyper_plan__errf(e, "%s: first_k_dense_replace (%u) leaves no MoE layer of %u",
			       file, m->first_dense, m->layers);
	if (m->kv_lora && (!m->qk_nope || !m->qk_rope || !m->v_head))
		return hyper_plan__errf(e, "%s: kv_lora_rank needs qk_nope_head_dim, qk_rope_head_dim and v_head_dim above 0",
			       file);
	if (m->kv_lora && (m->parallel || m->sandwich || m->qk_norm))
		return hyper_plan__errf(e, "%s: latent attention (kv_lora_rank) with parallel blocks, sandwich or q/k norms is not modelled",
			       file);
	if (m->sandwich && (m->experts || m->parallel))
		return hyper_plan__errf(e, "%s: gemma2's sandwich norms with experts or parallel blocks are not modelled",
			       file);
	if (m->max_pos && m->window)
		return hyper_plan__errf(e, "%s: a sliding window with learned positions (n_positions) is not modelled",
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
	/* the name, the description (a path in it), then the notes */
	size_t part = len / 4 < 128 ? len / 4 : 128, desc = len / 2;
	json_object *root;
	struct rd r = { .file = path, .multi_query = true, .window_layers = -1 };
	int ret = -EINVAL;

	if (len < 64)
		return hyper_plan__errf(e, "%s: a name buffer of %zu bytes is too small",
			       path, len);
	if (hyper_plan__json_load(path, 1 << 20, &root, e))
		return -EINVAL;
	if (!json_object_is_type(root, json_type_object)) {
		hyper_plan__errf(e, "%s: not a JSON object", path);
		goto out;
	}
	r.f = family_of(root, path, e);
	if (!r.f)
		goto out;
	*m = r.f->m;
	r.notes = names + part + desc;
	r.len = len - part - desc;
	r.notes[0] = 0;
	if (read_keys(m, &r, root, e))
		goto out;
	finish(m, &r);
	/*
	 * qwen2: the window is on the layers from max_window_layers (28 by
	 * default) on, and on none when it is past the last
	 */
	if (!strncmp(r.f->type, "qwen2", 5) && m->window) {
		if (r.window_layers < 0)
			r.window_layers = 28;
		if (r.window_layers >= m->layers) {
			m->window = 0;
		} else if (r.window_layers) {
			hyper_plan__errf(e, "%s: max_window_layers = %lld with use_sliding_window is not modelled: it would change attention, windowed on layers %lld.. only (0 windows every layer)",
				path, (long long)r.window_layers,
				(long long)r.window_layers);
			goto out;
		}
	}
	if (r.window_layers >= 0)
		note(&r, "max_window_layers", m->window ? NULL :
		     "no layer windowed");
	if (check_shape(m, path, e))
		goto out;
	name_of(path, names, part);
	snprintf(names + part, desc, "%s-family model from %s", r.f->type, path);
	m->name = names;
	m->desc = names + part;
	m->ignored = r.notes;
	ret = 0;
out:
	json_object_put(root);
	return ret;
}

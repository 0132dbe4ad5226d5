"""How the values of the allowed options of `vllm serve` whose value is free-form JSON or a
choice are restricted: the keys of their config class, the keys vLLM reads of a plain dict,
the choices of a Literal, and what each key's value may be. `vllm_serve_flags.py` reads the
keys and choices from each release's source and writes them to `flag_values.txt`."""

from __future__ import annotations

from vllm_reasons import CODE

# An allowed option whose value is free-form JSON or a choice is allowed only with the
# values below, derived from the release's own source (`vllm_read.config_keys`,
# `vllm_read.literal_values`) and written to `flag_values.txt`; every other allowed option
# takes any value.

# flag -> (module, config class): the value is a JSON object of that class's keys (or one
# key of it, ``--flag.key value``), and every string in it is a name (letters, digits, `_`,
# `-`): no path, URL or module, none of which these keys take.
# - AttentionConfig (vllm/config/attention.py): backends are `AttentionBackendEnum` /
#   `MLAPrefillBackendEnum` member names (validate_backend_before: ``Enum[value.upper()]``,
#   never an import), the rest bools, ints, Literals and the nested HiSparseConfig of ints.
# - KernelConfig (vllm/config/kernel.py): Literal backends (MoEBackend, LinearBackend,
#   SparseIndexerTopkBackend), bools, and IrOpPriorityConfig lists of provider names looked
#   up in ``IrOp.registry[op].impls`` (vllm/ir/op.py, _filter_priority_impls), never imported.
# - ReasoningConfig (vllm/config/reasoning.py): reasoning_parser is a registered name
#   (ReasoningParserManager.get_reasoning_parser, vllm/reasoning/abs_reasoning_parsers.py:
#   registered or lazily registered parsers only, else KeyError), as --reasoning-parser.
# - EPLBConfig (vllm/config/parallel.py), AuxOutputConfig (vllm/config/aux_output.py),
#   PoolerConfig (vllm/config/pooler.py), EngramConfig (vllm/config/engram.py),
#   IrOpPriorityConfig (vllm/config/kernel.py): ints, bools, floats and Literals, and
#   provider names as above; WatchdogConfig (vllm/config/watchdog_config.py): two ints and
#   dump_dir, refused below.
JSON_CONFIG_FLAGS: dict[str, tuple[str, str]] = {
    "--attention-config": ("config/attention.py", "AttentionConfig"),
    "--kernel-config": ("config/kernel.py", "KernelConfig"),
    "--reasoning-config": ("config/reasoning.py", "ReasoningConfig"),
    "--eplb-config": ("config/parallel.py", "EPLBConfig"),
    "--aux-output-config": ("config/aux_output.py", "AuxOutputConfig"),
    "--pooler-config": ("config/pooler.py", "PoolerConfig"),
    "--engram-config": ("config/engram.py", "EngramConfig"),
    "--watchdog-config": ("config/watchdog_config.py", "WatchdogConfig"),
    "--ir-op-priority": ("config/kernel.py", "IrOpPriorityConfig"),
    # JSON read into the class by create_diffusion_config / create_watermark_config
    # (vllm/engine/arg_utils.py: ``DiffusionConfig(**cfg)``, ``WatermarkConfig(**cfg)``).
    "--diffusion-config": ("config/diffusion.py", "DiffusionConfig"),
    "--watermark-config": ("config/watermarking.py", "WatermarkConfig"),
}
# flag -> refused key -> why.
REFUSED_KEYS: dict[str, dict[str, str]] = {
    # WatchdogConfig.dump_dir: "Directory to save stack dump files"; the watchdog makes it
    # and writes VLLM_STACK_DUMP_for_<name>_<pid>.log there (vllm/utils/watch_dog.py).
    "--watchdog-config": {
        "dump_dir": "writes stack dumps to a directory it names, a path of the serving pod",
    },
    # WatermarkConfig.key: "Secret key used to watermark generated text"
    # (vllm/config/watermarking.py); extra_args are stored in plain text.
    "--watermark-config": {
        "key": "the watermark's secret key, and arguments are stored in plain text",
    },
    # chat_template and tokenize are "unexpected" kwargs (0.33.0 vllm/renderers/hf.py,
    # resolve_chat_template_kwargs: unexpected_vars) and the template is the blueprint's.
    "--default-chat-template-kwargs": {
        "chat_template": "the chat template is set by models.<m>.vllm.chat_template",
        "tokenize": "vLLM renders the template to text and tokenizes it itself",
    },
    # The processor's from_pretrained takes trust_remote_code, already passed by vLLM from
    # --trust-remote-code (refused); given again it would ask to run the repository's code.
    "--mm-processor-kwargs": {
        "trust_remote_code": CODE + " (the model repository's processor .py files)",
    },
}
# flag -> keys whose strings are text, not names: reasoning_start_str / reasoning_end_str
# are only tokenized (ReasoningConfig.initialize_token_ids: tokenizer.encode), and are
# markers such as "</think>".
TEXT_KEYS: dict[str, frozenset[str]] = {
    "--reasoning-config": frozenset({"reasoning_start_str", "reasoning_end_str"}),
}
# flag -> (module, Literal alias): the value is one of the alias's choices, less the
# refused ones.
CHOICE_FLAGS: dict[str, tuple[str, str]] = {
    "--kv-offloading-backend": ("config/cache.py", "KVOffloadingBackend"),
    "--prefix-caching-hash-algo": ("config/cache.py", "PrefixCachingHashAlgo"),
    # 0.33.0: "Shortcut for --logging-config.log_level" (vllm/engine/arg_utils.py,
    # choices=get_args(LogLevel)).
    "--log-level": ("config/logging.py", "LogLevel"),
}
# flag -> refused choice -> why.
REFUSED_CHOICES: dict[str, dict[str, str]] = {
    # The level of vLLM's loggers, as VLLM_LOGGING_LEVEL (vllm_env_classes.VALUE_ENV says
    # which parser lines log output at DEBUG).
    "--log-level": {
        "DEBUG": "logs what the model writes (the tool-call parsers log every streamed piece "
        "of output)",
        "NOTSET": "logs what the model writes (the tool-call parsers log every streamed piece "
        "of output)",
    },
    # VllmConfig._post_init_kv_transfer_config (vllm/config/vllm.py): "lmcache" sets the
    # LMCacheMPConnector, which talks to a standalone LMCache server ("falls back to
    # tcp://localhost:5555"): a process inferplane does not run, holding the KV cache.
    "--kv-offloading-backend": {
        "lmcache": "sends the KV cache to an LMCache server, a process inferplane does not run",
    },
    # CacheConfig.prefix_caching_hash_algo (vllm/config/cache.py): xxHash is
    # "non-cryptographic hashing ... can cause undefined behavior or even leak private
    # information in multi-tenant environments".
    "--prefix-caching-hash-algo": {
        "xxhash": "a non-cryptographic hash, whose collisions can leak one client's cached "
        "prompt to another",
        "xxhash_cbor": "a non-cryptographic hash, whose collisions can leak one client's cached "
        "prompt to another",
    },
}

# flag -> (how its keys are read, modules (the first that defines the name; "reads": all
# of them), name, what a key's value is). Options whose value is a plain dict, no config
# class: every key is one the release reads, and its value is typed.
#   class:   the fields of a class (a TypedDict) — `vllm_read.config_keys`
#   literal: the values of a Literal alias — `vllm_read.literal_values`
#   list:    the strings of a list literal — `vllm_read.listed`
#   reads:   the keys the modules read of a dict — `vllm_read.keys_read`
#   any:     any key shaped as a Python name (`*` in the table), less the refused keys
# Value types (`vllm_values`): names (numbers, booleans and name-shaped strings, in lists
# and objects too), count (an int >= 0), count-or-options (a count, or an object of counts),
# numbers (a non-empty list of numbers), scalar (a number or a boolean), scalars (numbers
# and booleans, in lists and objects too: no string at all).
DICT_FLAGS: dict[str, tuple[str, tuple[str, ...], str, str]] = {
    # ModelConfig.limit_mm_per_prompt -> MultiModalConfig.limit_per_prompt: modality -> the
    # most items a prompt may carry (0.10.2 vllm/config/__init__.py, MultiModalConfig.
    # get_limit_per_prompt); 0.33.0 also takes {"count": n, "width": .., "height": ..,
    # "num_frames": .., "length": ..} (vllm/config/multimodal.py, _validate_limit_per_prompt:
    # Image/Video/AudioDummyOptions, all ints, extra="forbid"); the type is read from
    # EngineArgs.limit_mm_per_prompt's annotation (`limit_type`). The modalities are the keys
    # of MultiModalDataBuiltins (0.10.2 vllm/multimodal/inputs.py, 0.33.0 vllm/inputs/llm.py).
    "--limit-mm-per-prompt": (
        "class",
        ("multimodal/inputs.py", "inputs/llm.py"),
        "MultiModalDataBuiltins",
        "count",
    ),
    # modality -> keyword arguments of its MediaIO: ImageMediaIO(image_mode=..., **kwargs),
    # VideoMediaIO(image_io, num_frames=..., **kwargs) handing kwargs to the video loader,
    # AudioMediaIO(**kwargs) (0.10.2 vllm/multimodal/utils.py MediaConnector, image.py,
    # video.py, audio.py; 0.33.0 vllm/multimodal/media/connector.py, merge_media_io_kwargs).
    # Modes, frame counts and rates: names and numbers, never a path or URL.
    "--media-io-kwargs": (
        "class",
        ("multimodal/inputs.py", "inputs/llm.py"),
        "MultiModalDataBuiltins",
        "names",
    ),
    # FrontendArgs.reasoning_effort_map: effort -> the effort the chat template is given; the
    # keys are ReasoningEffort's (0.33.0 vllm/entrypoints/common/cli_args.py,
    # validate_reasoning_effort_map; vllm/renderers/params.py), the values strings.
    "--reasoning-effort-map": ("literal", ("renderers/params.py",), "ReasoningEffort", "names"),
    # ModelConfig.override_generation_config updates the generation config, of which
    # get_diff_sampling_param keeps only `available_params` (0.10.2 vllm/config/__init__.py,
    # 0.33.0 vllm/config/model.py): sampling numbers, and skip_special_tokens (0.33.0).
    "--override-generation-config": (
        "list",
        ("config/__init__.py", "config/model.py"),
        "available_params",
        "scalar",
    ),
    # 0.10.2 ModelConfig.rope_scaling becomes hf_overrides {"rope_scaling": ...}
    # (vllm/config/__init__.py, ModelConfig.__post_init__) and is read by get_rope
    # (vllm/model_executor/layers/rotary_embedding/__init__.py) and patch_rope_scaling_dict
    # (vllm/transformers_utils/config.py): factors, lengths and the rope type's name.
    "--rope-scaling": (
        "reads",
        ("model_executor/layers/rotary_embedding/__init__.py", "transformers_utils/config.py"),
        "rope_scaling",
        "names",
    ),
    # 0.10.2 ModelConfig.override_pooler_config is read as PoolerConfig(**value)
    # (vllm/config/__init__.py, ModelConfig.__post_init__).
    "--override-pooler-config": ("class", ("config/__init__.py",), "PoolerConfig", "names"),
    # MultiModalConfig.mm_processor_kwargs go, filtered by the signature of the processor's
    # from_pretrained (get_allowed_kwarg_only_overrides with allow_var_kwargs=True, i.e.
    # anything), into AutoProcessor.from_pretrained(model, revision=...,
    # trust_remote_code=..., **kwargs) (0.10.2 and 0.33.0 vllm/transformers_utils/
    # processor.py, _merge_mm_kwargs and get_processor). Their keys are the model's own
    # (num_crops, max_pixels, do_pan_and_scan), so any name; from_pretrained's string
    # arguments (cache_dir, subfolder, token, proxies, revision) would name paths, places and
    # credentials, so a value holds no string at all.
    "--mm-processor-kwargs": ("any", (), "", "scalars"),
    # FrontendArgs.default_chat_template_kwargs: variables of the chat template, merged under
    # each request's chat_template_kwargs (0.33.0 vllm/entrypoints/common/cli_args.py;
    # vllm/renderers/hf.py, resolve_chat_template_kwargs keeps apply_chat_template's
    # arguments and the template's variables): any name, such as enable_thinking.
    "--default-chat-template-kwargs": ("any", (), "", "names"),
}


def limit_type(annotation: str) -> str:
    """count-or-options when EngineArgs.limit_mm_per_prompt's annotation takes an object per
    modality (0.33.0: ``dict[str, int | dict[str, int]]``), else count."""
    return "count-or-options" if "int | dict[str, int]" in annotation else "count"


def value_rules(
    keys: dict[str, list[str]],
    choices: dict[str, list[str]],
    types: dict[str, str],
    sources: dict[str, list[str]],
) -> list[list[str]]:
    """The rows of `flag_values.txt` from what the release's source says (`keys`: flag ->
    the keys of its config class or dict, ``*`` for any name; `choices`: flag -> its
    Literal's values; `types`: flag -> what a key's value is, when not names; `sources`:
    flag -> the modules a dict's keys are read from)::

        FLAG<TAB>keys<TAB>k1 k2 ...[<TAB>text<TAB>t1 t2 ...]
        FLAG<TAB>values<TAB>type
        FLAG<TAB>source<TAB>vllm/m1.py ...
        FLAG<TAB>refused-key<TAB>key<TAB>why
        FLAG<TAB>choices<TAB>v1 v2 ...
        FLAG<TAB>refused<TAB>value<TAB>why
    """
    out: list[list[str]] = []
    for flag in sorted(keys):
        refused_keys = REFUSED_KEYS.get(flag, {})
        row = [flag, "keys", " ".join(k for k in sorted(keys[flag]) if k not in refused_keys)]
        text = sorted(TEXT_KEYS.get(flag, frozenset()) & set(keys[flag]))
        out.append([*row, "text", " ".join(text)] if text else row)
        if types.get(flag, "names") != "names":
            out.append([flag, "values", types[flag]])
        if flag in sources:
            out.append([flag, "source", " ".join(f"vllm/{m}" for m in sources[flag])])
        out += [[flag, "refused-key", k, refused_keys[k]] for k in sorted(refused_keys)
                if k in keys[flag] or keys[flag] == ["*"]]  # fmt: skip
    for flag in sorted(choices):
        refused = REFUSED_CHOICES.get(flag, {})
        allowed = [v for v in sorted(choices[flag]) if v not in refused]
        out.append([flag, "choices", " ".join(allowed)])
        out += [[flag, "refused", v, refused[v]] for v in sorted(refused) if v in choices[flag]]
    return out

"""Writes the released checkpoints' ``config.json`` that the model table reads
(`inferplane/facts/models/configs.json`), from the copies NVIDIA's aiconfigurator ships.

The Hugging Face Hub is not reachable from every build machine, and ``transformers`` ships
only config classes with defaults, not the released checkpoints' configs. The PyPI package
``aiconfigurator-core`` 0.12.0 (the ``capacity`` extra) ships the released ``config.json``
of the models it times, as ``aiconfigurator_core/model_configs/<org>--<name>_config.json``:
this script copies those of `MODELS` with the wheel's name, the file's path in it and its
sha256, so each row of the table is traceable to the bytes it was read from.

    pip download --no-deps aiconfigurator-core==0.12.0 -d build/aic   # or install the extra
    python scripts/facts/llm_configs.py [--wheel build/aic/aiconfigurator_core-0.12.0-*.whl]
    python scripts/facts/llm_configs.py --check                      # compare, do not write

Without ``--wheel`` it reads the installed ``aiconfigurator_core`` package. Each config is
kept whole except ``quantization_config``, of which only ``quant_method`` is kept. Whisper's
config no package ships: `TRANSCRIBED` holds the keys that size it, copied from a public
printout of the released file with that printout's address (sha256 of the keys as written).
`inferplane.blueprint.llm_catalog` reads the file with `inferplane.blueprint.llm_config`;
`tests/blueprint/test_llm_config.py` holds the counts read from it against the model cards.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import sys
import zipfile
from pathlib import Path
from typing import Any

PACKAGE = "aiconfigurator-core==0.12.0"
OUT = Path(__file__).resolve().parents[2] / "inferplane" / "facts" / "models" / "configs.json"
VERSION = 1

# (file stem in model_configs/, the Hub repositories it describes). A base model and its
# instruct or FP8 variants share an architecture; an FP8 checkpoint has its own file where
# the wheel ships one (its quantization_config differs).
MODELS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Qwen--Qwen3-0.6B", ("Qwen/Qwen3-0.6B",)),
    ("Qwen--Qwen3-1.7B", ("Qwen/Qwen3-1.7B",)),
    ("Qwen--Qwen3-8B", ("Qwen/Qwen3-8B",)),
    ("Qwen--Qwen3-32B", ("Qwen/Qwen3-32B",)),
    ("Qwen--Qwen3-32B-FP8", ("Qwen/Qwen3-32B-FP8",)),
    ("Qwen--Qwen3-30B-A3B", ("Qwen/Qwen3-30B-A3B", "Qwen/Qwen3-30B-A3B-Base")),
    ("Qwen--Qwen3-30B-A3B-FP8", ("Qwen/Qwen3-30B-A3B-FP8",)),
    ("Qwen--Qwen3-235B-A22B", ("Qwen/Qwen3-235B-A22B",)),
    ("Qwen--Qwen3-235B-A22B-FP8", ("Qwen/Qwen3-235B-A22B-FP8",)),
    ("Qwen--Qwen3-Coder-480B-A35B-Instruct", ("Qwen/Qwen3-Coder-480B-A35B-Instruct",)),
    (
        "meta-llama--Meta-Llama-3.1-8B",
        ("meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8B-Instruct"),
    ),
    (
        "meta-llama--Meta-Llama-3.1-70B",
        (
            "meta-llama/Llama-3.1-70B",
            "meta-llama/Llama-3.1-70B-Instruct",
            "meta-llama/Llama-3.3-70B-Instruct",
        ),
    ),
    (
        "meta-llama--Meta-Llama-3.1-405B",
        ("meta-llama/Llama-3.1-405B", "meta-llama/Llama-3.1-405B-Instruct"),
    ),
    (
        "mistralai--Mixtral-8x7B-v0.1",
        ("mistralai/Mixtral-8x7B-v0.1", "mistralai/Mixtral-8x7B-Instruct-v0.1"),
    ),
    (
        "mistralai--Mixtral-8x22B-v0.1",
        ("mistralai/Mixtral-8x22B-v0.1", "mistralai/Mixtral-8x22B-Instruct-v0.1"),
    ),
    ("openai--gpt-oss-20b", ("openai/gpt-oss-20b",)),
    ("openai--gpt-oss-120b", ("openai/gpt-oss-120b",)),
    ("deepseek-ai--DeepSeek-V3", ("deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-V3-0324")),
    ("deepseek-ai--DeepSeek-R1", ("deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-R1-0528")),
)


# Configs no registry package ships, copied by hand from a public printout of the released
# file, with that printout's address: (repository id, its other ids, source, the keys).
_WHISPER_LARGE_V3 = {
    # WhisperConfig.from_pretrained("openai/whisper-large-v3") (snapshot
    # 06f233fe06e710322aca913c1bc4249a0d71fce1, transformers 4.43.2) as printed in the
    # source below; the keys that size the model.
    "architectures": ["WhisperForConditionalGeneration"],
    "d_model": 1280,
    "decoder_attention_heads": 20,
    "decoder_ffn_dim": 5120,
    "decoder_layers": 32,
    "encoder_attention_heads": 20,
    "encoder_ffn_dim": 5120,
    "encoder_layers": 32,
    "is_encoder_decoder": True,
    "max_source_positions": 1500,
    "max_target_positions": 448,
    "model_type": "whisper",
    "num_mel_bins": 128,
    "vocab_size": 51866,
}
TRANSCRIBED: tuple[tuple[str, tuple[str, ...], str, dict[str, Any]], ...] = (
    (
        "openai/whisper-large-v3",
        ("openai/whisper-large-v3",),
        "https://github.com/Xianchao-Wu/distil-whisper/blob/"
        "10c11aab0ddf6d3909c519d525f962d1f9f2e6f9/training/run_pseudo_labelling.py",
        _WHISPER_LARGE_V3,
    ),
    (
        # large-v3 with 4 decoder layers: "Whisper large-v3-turbo is a fine-tuned version of a
        # pruned Whisper large-v3 ... with the number of decoding layers reduced from 32 to 4"
        # (https://catalog.ngc.nvidia.com/orgs/nvidia/teams/riva/models/whisper_large_turbo)
        "openai/whisper-large-v3-turbo",
        ("openai/whisper-large-v3-turbo",),
        "https://catalog.ngc.nvidia.com/orgs/nvidia/teams/riva/models/whisper_large_turbo",
        {**_WHISPER_LARGE_V3, "decoder_layers": 4},
    ),
)


def _read_files(wheel: Path | None) -> tuple[str, dict[str, bytes]]:
    """(where the files come from, file stem -> bytes)."""
    names = {stem: f"aiconfigurator_core/model_configs/{stem}_config.json" for stem, _ in MODELS}
    if wheel is not None:
        with zipfile.ZipFile(wheel) as z:
            return wheel.name, {stem: z.read(path) for stem, path in names.items()}
    spec = importlib.util.find_spec("aiconfigurator_core")
    if spec is None or spec.origin is None:
        sys.exit(f"{PACKAGE} is not installed: pip install it or pass --wheel")
    root = Path(spec.origin).parent.parent
    return PACKAGE, {stem: (root / path).read_bytes() for stem, path in names.items()}


def _slim(config: dict[str, Any]) -> dict[str, Any]:
    out = dict(config)
    quant = out.get("quantization_config")
    if isinstance(quant, dict):
        out["quantization_config"] = {"quant_method": quant.get("quant_method")}
    return out


def build(wheel: Path | None) -> str:
    origin, files = _read_files(wheel)
    rows = {}
    for stem, repos in MODELS:
        data = files[stem]
        rows[stem.replace("--", "/", 1)] = {
            "repos": list(repos),
            "source": f"{PACKAGE} aiconfigurator_core/model_configs/{stem}_config.json",
            "sha256": hashlib.sha256(data).hexdigest(),
            "config": _slim(json.loads(data)),
        }
    for repo, repos, source, config in TRANSCRIBED:
        text = json.dumps(config, sort_keys=True).encode()
        rows[repo] = {
            "repos": list(repos),
            "source": f"transcribed from {source}",
            "sha256": hashlib.sha256(text).hexdigest(),
            "config": config,
        }
    doc = {
        "generated_by": f"scripts/facts/llm_configs.py v{VERSION} from {origin}",
        "models": rows,
    }
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel", type=Path, help="the aiconfigurator-core 0.12.0 wheel")
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args()
    text = build(args.wheel)
    if args.check:
        old = json.loads(OUT.read_text(encoding="utf-8"))
        new = json.loads(text)
        if old["models"] != new["models"]:
            sys.exit(f"{OUT} differs from the configs of {PACKAGE}: run without --check")
        print(f"{OUT.name}: up to date")
        return
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT} ({len(MODELS)} configs)")


if __name__ == "__main__":
    main()

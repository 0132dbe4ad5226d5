"""Downloads one pinned Hugging Face repository; run in the vLLM image (huggingface_hub).

    python3 hub_download.py <repo> <revision> <dir> [<ignore pattern> ...]

``snapshot_download(repo_id, revision=, local_dir=, ignore_patterns=)``
(huggingface/huggingface_hub ``src/huggingface_hub/_snapshot_download.py``); the token, if
any, is the file ``HF_TOKEN_PATH`` names, which huggingface_hub reads itself.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any


def download_args(argv: Sequence[str]) -> dict[str, Any]:
    """The keyword arguments of ``snapshot_download`` for this command line."""
    if len(argv) < 3:
        sys.exit("usage: hub_download.py <repo> <revision> <dir> [<ignore pattern> ...]")
    repo, revision, local_dir, *ignore = argv
    return {
        "repo_id": repo,
        "revision": revision,
        "local_dir": local_dir,
        "ignore_patterns": list(ignore) or None,
    }


def main(argv: Sequence[str]) -> int:
    kwargs = download_args(argv)
    from huggingface_hub import snapshot_download

    snapshot_download(**kwargs)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

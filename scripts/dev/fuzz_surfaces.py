"""What scripts/dev/fuzz_check.py writes into blueprints: the surfaces (YAML path patterns) and
the hostile values of each. A surface is one line of `SURFACES`; a pool value is a value or a
function of the case that returns one (and may make files in the case's folder)."""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


class _Delete:
    """A pool value that removes the key instead of setting it."""

    def __repr__(self) -> str:
        return "<delete the key>"


DELETE = _Delete()


@dataclass
class Case:
    """What one case may use while it builds its value: its random source and its folder."""

    rng: random.Random
    folder: Path
    notes: list[str] = field(default_factory=list)


Value = Any | Callable[[Case], Any]

# --- value pools -------------------------------------------------------------------------

BIG = 2**63
ODD_TEXT = [
    "", " ", "a" * 5000, "x\x00y", "x\ny", "x\x1b[2Jy", "\u202egnp.exe", "\ud800", "caf\u00e9",
    "\u0661\u0662", "\u00b9", "${HOME}", "$(id)", "`id`", "../../etc/passwd", "/etc/passwd",
    "{{ 7*7 }}", "%s%n%x", "a,b;c|d&e", "--help", "-", "UPPER", "*", "\\", '"', "'", "#", ": x",
    "null", "~", "1e999", "NaN"
]  # fmt: skip
GENERIC = [DELETE, None, "", "a" * 100_000, -1, 0, BIG, 2**64, -(2**63) - 1, 1.5, 1e308, -0.0,
           True, [], {}, [None], {"": None}, "\u0661", *ODD_TEXT[:12]]  # fmt: skip
INTS = [0, -1, 1, 2, 3, 64, 4096, 65535, 65536, 10**6, 10**9, BIG - 1, BIG, 0.5, 2.0, 1e20]
NUMBERS = [*INTS, 1e-300, 1e308, -1e-9, 0.999999, 1.0000001, 100.0]
ZONE_NAMES = ["us-east-1a", "us-east-1b", "us-east-1-bos-1a", "use1-az1", "us-central1-a",
              "europe-west4-a", "eu-west-1a", "zone-a", "zone-b", "ZONE-A", "a" * 64, "a" * 300,
              "zone a", "zone/a", "zone.a", "zone_a", "-zone", "zone-", "local", ""]  # fmt: skip
REGIONS = ["us-east-1", "us-central1", "eu-west-1", "europe-west4", "local", "us-east-1a",
           "US-EAST-1", "us-gov-west-1", "cn-north-1", "me-central2", "us-east-99",
           "a" * 64, "us_east_1", "us-east-1 ", *ODD_TEXT]  # fmt: skip
HOSTS = ["store.inferplane-system.svc", "169.254.169.254", "metadata.google.internal",
         "metadata", "[fd00:ec2::254]", "[::1]", "[::ffff:169.254.169.254]", "[fe80::1%25eth0]",
         "localhost", "127.0.0.1", "0x7f.1", "2130706433", "0177.0.0.1", "a" * 300,
         "h\u00e9.example", "xn--h-bga.example", "host_name", "host name", "-host", "host.",
         "..", "user:pw@host", "host#frag", "host?q", "kubernetes.default.svc",
         "s3.amazonaws.com", "10.0.0.1", "[::]", "[", "]"]  # fmt: skip
PORTS = ["9000", "0", "65535", "65536", "99999", "-1", "+80", " 80", "80 ", "\u0669\u0660",
         "\u00b9", "9_000", "0x50", "00080", "", "a", "1e3", "9" * 5000]  # fmt: skip
JSON_OPTIONS = ["--attention-config", "--compilation-config", "--override-generation-config",
                "--limit-mm-per-prompt", "--mm-processor-kwargs", "--default-chat-template-kwargs",
                "--custom-histogram-buckets", "--reasoning-config", "--kernel-config",
                "--speculative-config", "--hf-overrides", "--kv-transfer-config"]  # fmt: skip
JSON_VALUES = ['{"backend": "FLASH_ATTN"}', "{" * 5000 + "}" * 5000, "[" * 100_000,
               '{"a":' * 30 + "1" + "}" * 30, '{"temperature": NaN}', '{"temperature": Infinity}',
               '{"temperature": -Infinity}', '{"temperature": 1e999}', "1" * 4400,
               '{"temperature": ' + "9" * 5000 + "}", '{"top_k": 1, "top_k": 2}',
               '{"\\ud800": 1}', '{"backend": "\\u0000"}', '{"caf\u00e9": 1}', '{"": 1}',
               '{"image": {"count": -1}}', '{"image": 1.5}', "null", "[]", '"x"', "{}", "",
               "{", '{"backend": ["a", {"b": [1]}]}', '{"temperature": true}',
               '{"inter_token_latency": []}', '{"inter_token_latency": [1e400]}',
               '{"reasoning_start_str": "x"}', "\u0661", "-0", "1_000"]  # fmt: skip


def _json_keys() -> dict[str, list[str]]:
    """The JSON options of the newest pinned vLLM release and the keys it reads of each."""
    table = sorted((ROOT / "inferplane" / "facts" / "vllm").glob("*/flag_values.txt"))[-1]
    out: dict[str, list[str]] = {}
    for line in table.read_text(encoding="utf-8").splitlines():
        cells = line.split("\t")
        if len(cells) >= 3 and cells[1] == "keys":
            out[cells[0]] = cells[2].split()
    return out


JSON_KEYS = _json_keys()
HOSTILE_JSON = [
    "NaN", "Infinity", "-Infinity", "1e999", "-0", "9" * 5000, "1" * 4000, "[" * 40 + "]" * 40,
    "[" * 20 + "1" + "]" * 20, '"\\ud800"', '"\\u0000"', '"caf\u00e9"', '"a/b"', '"x"', "true",
    "null", "[]", "{}", '{"a": {"b": [1]}}', "[1, 2.5, 1e308]", "[NaN]", "0.1", "4096",
    '"' + "a" * 3000 + '"', "1_0"
]  # fmt: skip
"""JSON values (as text) for a key of a JSON option."""


def _json_value(case: Case, flag: str) -> str:
    rng = case.rng
    key = rng.choice([*(JSON_KEYS.get(flag) or ["backend"]), "", "a" * 200, "__class__"])
    hostile = rng.choice(HOSTILE_JSON)
    return rng.choice([
        f'{{"{key}": {hostile}}}', f'{{"{key}": 1, "{key}": {hostile}}}',
        f'{{"{key}": {{"{key}": {hostile}}}}}', rng.choice(JSON_VALUES), hostile,
        "{" + ", ".join(f'"{k}": {hostile}' for k in JSON_KEYS.get(flag, [])) + "}",
    ])  # fmt: skip


def _flag(case: Case) -> Any:
    """One `vllm serve` argument or a few, most a JSON option of the pinned release with a
    key it reads and a hostile value."""
    rng = case.rng
    flag = rng.choice([*JSON_KEYS, *JSON_OPTIONS])
    value = _json_value(case, flag)
    key = rng.choice(JSON_KEYS.get(flag) or ["backend"])
    forms = [
        [f"{flag}={value}"], [flag, value], [f"{flag}={value}"], [flag, value], [flag],
        [f"{flag}.{key}={rng.choice(HOSTILE_JSON)}"], [f"{flag}.{key}", rng.choice(HOSTILE_JSON)],
        [f"{flag}.{key}" + ".a" * rng.choice([10, 40, 2000]), rng.choice(HOSTILE_JSON)],
        [f"{flag}.{key}+={rng.choice(HOSTILE_JSON)}"], [f"{flag}.{key}.+=1,2"],
        [f"{flag}.{rng.choice(['', '.', '+', '*'])}={value}"],
        [f"{flag}={value}", f"{flag}={value}"], [f"{flag}={value}", f"{flag}.{key}=1"],
        [f"{flag[:6]}={value}"], ["-O3"], ["-O", "{}"], ["--"], ["-"], ["--=1"],
        ["--block-size", "32"], ["--block-size=" + "9" * 4000], ["--model", "x"], ["--port=1"],
        ["--trust-remote-code"], ["--BLOCK-SIZE=32"], ["--block_size=32"], [value],
        ["--block-size\u00a0=32"], ["--enable-prefix-caching=" + value],
    ]  # fmt: skip
    return rng.choice(forms) if rng.random() < 0.9 else [rng.choice(ODD_TEXT)] * rng.randint(1, 70)


def _zones(case: Case) -> Any:
    rng = case.rng
    return rng.choice([
        [], [rng.choice(ZONE_NAMES)], rng.sample(ZONE_NAMES, 3), [ZONE_NAMES[0]] * 2,
        [f"zone-{i}" for i in range(100)], [["us-east-1a"]], [1], [None], "us-east-1a",
    ])  # fmt: skip


def _one_of(case: Case, parts: Sequence[str], choices: Sequence[Sequence[str]]) -> str:
    """`parts` joined, each replaced by one of its `choices` at random; most often only one
    part is, so that the value stays close enough to pass validation now and then."""
    rng = case.rng
    every = rng.random() < 0.3
    which = rng.randrange(len(parts))
    return "".join(
        rng.choice(c) if every or i == which else p
        for i, (p, c) in enumerate(zip(parts, choices, strict=True))
    )


ENDPOINT_PARTS = ("http://", "store.inferplane-system.svc", ":9000", "")
ENDPOINT_CHOICES = (
    ["http://", "https://", "HTTP://", "ftp://", "", "http:/", "//", "s3://"],
    HOSTS,
    [f":{p}" for p in PORTS] + [""],
    ["", "/", "/path", "/..", "?q=1", "#f", "/%00", ":", " "],
)
STORE_PARTS = ("s3://", "models", "/", "")
STORE_CHOICES = (
    ["s3://", "gs://", "S3://", "hf://", "file://", "http://", "", "s3:/"],
    ["models", "acme-models-use1", "a", "ab", "a" * 64, "Bucket", "b_c", "b..c", "192.168.0.1",
     "xn--b", "b-", "-b", "b\u00e9", "models:9000", "169.254.169.254", ""],
    ["", "/", "//", "/../", "/./"],
    ["", "x/", "../", "a/../../b/", "a b/", "?x", "#x", "*", "$(x)/", "k" * 1100, "new-user/"],
)  # fmt: skip


def _endpoint(case: Case) -> str:
    return _one_of(case, ENDPOINT_PARTS, ENDPOINT_CHOICES)


def _store(case: Case) -> str:
    return _one_of(case, STORE_PARTS, STORE_CHOICES)


def _cidrs(case: Case) -> Any:
    rng = case.rng
    pool = ["10.0.0.0/8", "0.0.0.0/0", "::/0", "10.0.0.1/8", "10.0.0.0/33", "10.0.0.0/-1",
            "10.0.0.0", "10.0.0.0/08", "10.0.0.0/ 8", "10.0.0.0/\u0668", "fe80::/10",
            "::ffff:10.0.0.0/104", "169.254.169.254/32", "256.0.0.0/8", "1.2.3/24", "abc",
            "10.0.0.0/8/8", "", "2001:db8::/129", "0.0.0.0/1", "128.0.0.0/1"]  # fmt: skip
    return rng.choice([[rng.choice(pool)], rng.sample(pool, 4), pool[:1] * 2, [], pool[:1] * 500,
                       [[pool[0]]], "10.0.0.0/8"])  # fmt: skip


def _namespaces(case: Case) -> Any:
    rng = case.rng
    pool = ["default", "kube-system", "apps", "*", "", "a" * 63, "a" * 64, "UPPER", "a_b",
            "-a", "a-", "inferplane-system", "monitoring", "a.b", "1abc"]  # fmt: skip
    return rng.choice([[rng.choice(pool)], rng.sample(pool, 3), ["apps", "apps"], [], pool * 40])


def _secrets(case: Case) -> Any:
    rng = case.rng
    name = rng.choice(["store-reader", "", "A", "a" * 254, "a.b", "a_b", "-a", "../x", "a b",
                       "store-engine-builder", "a" * 253, "x"])  # fmt: skip
    role = rng.choice(["reader", "engine_builder", "weights_stager", "vllm_compiler", "writer",
                       "", "READER"])  # fmt: skip
    base = {
        "reader": "store-reader",
        "engine_builder": "store-engine-builder",
        "weights_stager": "store-weights-stager",
        "vllm_compiler": "store-vllm-compiler",
    }
    return rng.choice([{**base, role: name}, {**base, role: name}, {role: name}, {}, [name], name,
                       {k: name for k in base}, {"reader": name}])  # fmt: skip


def _cluster_name(case: Case) -> Any:
    return case.rng.choice(["prod-gke", "a" * 100, "a" * 40, "UPPER", "a_b", "-a", "a.b",
                            "1a", "a--b", *ODD_TEXT])  # fmt: skip


def _template(case: Case) -> Any:
    rng = case.rng
    return rng.choice([
        "{% for m in messages %}{{ m.content }}{% endfor %}",
        "{{ ''.__class__.__mro__[1].__subclasses__() }}",
        "{{ lipsum.__globals__['os'].popen('id').read() }}",
        "{% include '/etc/passwd' %}", "{% import 'x' as y %}", "{% raw %}{{", "{{", "}}", "{}",
        "{" * 200_000, "{{ x }}" * 150_000, "/etc/passwd", "./template.jinja",
        "template.jinja", "../x.jinja", "{{ x }}\n{{ y }}", "{{ x }}\r", "{{ x }}\x00",
        "{{ x }}\u2028", "{{ '\u202e' }}", "{{ x }}\t", "{% macro m() %}{{ m() }}{% endmacro %}",
        "{{ x | attr('__class__') }}", "{#", "{%- if -%}", "{{ messages[0]['content'] }}",
    ])  # fmt: skip


def _image(case: Case) -> Any:
    return case.rng.choice([
        "nvcr.io/nvidia/tritonserver:26.02-py3", "vllm/vllm-openai:v0.33.0", "evil.example/x",
        "evil.example/x:latest", "x@sha256:" + "0" * 64, "x@sha256:zz", "x:tag@sha256:" + "a" * 64,
        "UPPER/x:1", "x:" + "a" * 200, "localhost:5000/x:1", "[::1]:5000/x:1", "x y", "-x",
        "x:", ":tag", "x::1", "a" * 5000, "registry:99999/x:1", "169.254.169.254/x:1",
        *ODD_TEXT[:12],
    ])  # fmt: skip


def _env_vars(case: Case) -> Any:
    rng = case.rng
    name = rng.choice(["VLLM_LOGGING_LEVEL", "VLLM_X", "LD_PRELOAD", "PYTHONPATH", "PATH",
                       "HF_TOKEN", "HTTPS_PROXY", "A=B", "", "1A", "a" * 200, "vllm_logging_level",
                       "VLLM_CONFIGURE_LOGGING", "VLLM_PORT"])  # fmt: skip
    value = rng.choice(["WARNING", "DEBUG", "1", "", "x" * 10000, 1, 1.5, True, None, [],
                        "$(HOME)", "a\nb", "\u0661", "./evil.so"])  # fmt: skip
    return rng.choice([{name: value}, {f"V{i}": "1" for i in range(70)}, {}, [name], name])


def _adapters(case: Case) -> Any:
    rng = case.rng
    source = rng.choice(["adapters/a/", "s3://bucket/a", "gs://b/a", "hf://org/a@abc",
                         "hf://org/a", "hf://org/a@", "../a", "/a", "s3://b/a?x", "a b",
                         "s3://models/../x", "a" * 1100, "hf://o/a@" + "0" * 40])  # fmt: skip
    name = rng.choice(["sql", "chat", "", "A", "a" * 64, "a.b", "-a"])
    return rng.choice([
        {"adapters": {name: source}}, {"adapters": {}},
        {"adapters": {f"a{i}": source for i in range(70)}},
        {"adapters": {name: source}, "max_loras": rng.choice(INTS)},
        {"adapters": {name: source}, "max_lora_rank": rng.choice([8, 7, 1024])}
    ])  # fmt: skip


def _profile_file(case: Case) -> str:
    """A profile CSV name, its file made beside the blueprint: a good one, a link out of the
    folder, a loop, a FIFO, a folder, undecodable or oversized bytes, or bad rows."""
    f, rng = case.folder, case.rng
    kind = rng.choice(["good", "link-out", "loop", "fifo", "dir", "binary", "big", "rows",
                       "missing", "absolute", "parent", "link-in", "deep"])  # fmt: skip
    name = f"{kind}.csv"
    if kind == "good":
        (f / name).write_text("batch_size,p95_ms\n1,2.0\n4,3.5\n")
    elif kind == "link-out":
        (f / name).symlink_to("/etc/passwd")
    elif kind == "loop":
        (f / name).symlink_to(name)
    elif kind == "fifo":
        os.mkfifo(f / name)
    elif kind == "dir":
        (f / name).mkdir()
    elif kind == "binary":
        (f / name).write_bytes(b"batch_size,p95_ms\n1,\xff\xfe\n")
    elif kind == "big":
        (f / name).write_text("batch_size,p95_ms\n" + "1,2.0\n" * 20_000)
    elif kind == "rows":
        row = rng.choice([
            "1,nan", "1,1e999", "\u0663,4", "1,1_0", "0,1", "4097,1", "1,-1", "1,2,3", "1",
            "1,2\n1,3", "99999999999999999999,1", ",", "1,\u0661"
        ])  # fmt: skip
        (f / name).write_text(f"batch_size,p95_ms\n{row}\n")
    elif kind == "link-in":
        (f / "real.csv").write_text("batch_size,p95_ms\n1,2.0\n")
        (f / name).symlink_to(f / "real.csv")
    elif kind == "absolute":
        name = str(f / "abs.csv")
    elif kind == "parent":
        name = "../parent.csv"
        (f.parent / "parent.csv").write_text("batch_size,p95_ms\n1,2.0\n")
    elif kind == "deep":
        name = "a/" * 200 + "x.csv"
    return name


def _cron(case: Case) -> str:
    return case.rng.choice([
        "0 2 * * *", "* * * * *", "60 25 * * *", "0 2 31 2 *", "@reboot", "0 2 * * 8",
        "*/0 * * * *", "0-59/1000 * * * *", "0 2 * * MON-SUN", "0 2 * *", "0 2 * * * *",
        "0 " + "1," * 40 + "2 * * *", "0 2 ? * *", "0 2 L * *", "0 24 * * *", "-1 2 * * *",
        "0 \u0662 * * *"
    ])  # fmt: skip


def _window(case: Case) -> Any:
    rng = case.rng
    window = {
        "schedule": _cron(case),
        "duration": rng.choice(
            ["3h", "0h", "24h", "23h59m", "1h60m", "99999999999999999999h", "0m", "h", "3H"]
        ),
        "min": rng.choice(INTS),
    }
    if rng.random() < 0.5:
        window["timezone"] = rng.choice([
            "UTC", "Europe/Berlin", "Mars/Base", "Etc/GMT+14", "right/UTC", "posix/UTC",
            "A/" + "b/" * 20, "Factory"
        ])  # fmt: skip
    return rng.choice([[window], [window] * 11, [], window])


def _minmax(values: Sequence[Any]) -> Callable[[Case], Any]:
    def make(case: Case) -> Any:
        rng = case.rng
        low, high = rng.choice(values), rng.choice(values)
        return rng.choice([{"min": low, "max": high}, {"min": low}, {"max": high}, {}, [low]])

    return make


def _slo(case: Case) -> Any:
    rng = case.rng
    keys = ["p95_ms", "ttft_p95_ms", "itl_p95_ms"]
    return {k: rng.choice(NUMBERS) for k in rng.sample(keys, rng.randint(0, 3))}


def _traffic(case: Case) -> Any:
    rng = case.rng
    return {
        "peak_rps": rng.choice(NUMBERS),
        "input_tokens": rng.choice(INTS),
        "output_tokens": rng.choice(INTS),
        "shared_prefix": rng.choice([0, 0.5, 1, 1.0, 1.5, -0.1, 1e-300]),
    }


def _autoscaling(case: Case) -> Any:
    rng = case.rng
    one = {
        "metric": rng.choice(
            [
                "queue_depth",
                "gpu_utilization",
                "p95_latency_ms",
                "ttft_p95_ms",
                "concurrency",
                "",
                "QUEUE_DEPTH",
            ]
        ),
        "target": rng.choice(NUMBERS),
    }
    return rng.choice([one, [one], [one, one], [], {"metric": one["metric"]}])  # fmt: skip


def _source(case: Case) -> Any:
    return case.rng.choice([
        "hf://", "hf://org/name", "hf://org/name@", "hf://org/name@main", "hf://o/n@" + "0" * 40,
        "hf://a/b/c@r", "hf://org/name@../x", "s3://", "s3://b", "s3://b/", "s3://b/../x",
        "gs://b/k", "../../etc/passwd", "/abs/model.onnx", "model.onnx", "x/model.onnx/",
        "file:///etc/passwd", "http://169.254.169.254/x", "~/m", "%2e%2e/m", "m?x#y",
        "m/" * 600, "ngc://nvidia/x", *ODD_TEXT[:12],
    ])  # fmt: skip


def _release(case: Case) -> Any:
    return case.rng.choice([
        "26.02", "25.01", "99.99", "26.13", "0.0", "v0.33.0", "v0.10.2", "v9.9.9", "latest",
        "\u0661\u0662.02", "26.02 ", "26.2", ""
    ])  # fmt: skip


def _pool_gpu(case: Case) -> Any:
    return case.rng.choice([
        "nvidia-l4", "nvidia-h100-80gb", "nvidia-a100-40gb", "NVIDIA-L4", "nvidia-l4 ",
        "amd-mi300x", "nvidia-", "", "a" * 500
    ])  # fmt: skip


PROJECTS = ["acme-ml-prod", "a", "a" * 31, "A-b", "a_b", "-a", "1abc", "google", *ODD_TEXT]
CLUSTERS = [{"create": True, "existing": "x"}, {}, {"create": False}, {"context": "c"}]
LABELS = [{"a": "b"}, {"": ""}, {"a/b/c": "x"}, {"app": "a" * 64}, {"k": 1}]
INSTANCE_TYPES = ["g6.2xlarge", "p5.48xlarge", "g2-standard-8", "a" * 300, "x.large", ""]


def _config_list(case: Case) -> Any:
    rng = case.rng
    return rng.choice([[_endpoint(case)], [_store(case)], ["*"], [], [None], "x", {"*": []}])


def overridable(pattern: str, values: Sequence[Value]) -> tuple[Surface, Surface]:
    """A field of a model, pool or the load balancer, and the same set by an environment's
    `overrides` (deep-merged into it)."""
    return Surface(pattern, values), Surface(pattern, values, override=True)


@dataclass(frozen=True)
class Surface:
    pattern: str
    """Dotted YAML path; `*` matches every key or item; `config:` targets the policy config."""
    values: Sequence[Value]
    override: bool = False

    @property
    def name(self) -> str:
        return f"environments.*.overrides.{self.pattern}" if self.override else self.pattern


SURFACES: tuple[Surface, ...] = (
    Surface("environments.*.region", REGIONS),
    Surface("environments.*.zones", [_zones]),
    Surface("environments.*.zones.*", ZONE_NAMES),
    Surface("environments.*.project", PROJECTS),
    Surface("environments.*.cloud", ["aws", "gcp", "kubernetes", "azure", "AWS", ""]),
    Surface("environments.*.cluster.existing", [_cluster_name]),
    Surface("environments.*.cluster.location", REGIONS + ZONE_NAMES),
    Surface("environments.*.cluster.context", [_cluster_name]),
    Surface("environments.*.cluster.dataplane", ["cilium", "calico", "kube-proxy", "", "x"]),
    Surface("environments.*.cluster.kubernetes_version", ["1.33", "1.20", "2.0", "1.99", "1"]),
    Surface("environments.*.cluster", CLUSTERS),
    Surface("environments.*.model_store", [_store]),
    Surface("environments.*.model_store_endpoint", [_endpoint]),
    Surface("environments.*.model_store_secrets", [_secrets]),
    Surface("environments.*.model_store_pod_labels", LABELS),
    *overridable("load_balancer.allowed_cidrs", [_cidrs]),
    *overridable("load_balancer.client_namespaces", [_namespaces]),
    *overridable("load_balancer.scheme", ["internal", "external", "", "INTERNAL"]),
    *overridable("models.*.source", [_source]),
    *overridable("models.*.image", [_image]),
    *overridable("models.*.base_release", [_release]),
    *overridable("models.*.vllm.chat_template", [_template]),
    *overridable("models.*.vllm.extra_args", [_flag]),
    *overridable("models.*.vllm.extra_args.*", [lambda c: _flag(c)[0]]),
    *overridable("models.*.vllm.env", [_env_vars]),
    *overridable("models.*.vllm.lora", [_adapters]),
    *overridable("models.*.profile", [lambda c: {"file": _profile_file(c)}]),
    *overridable("models.*.replicas", [_minmax(INTS)]),
    *overridable("models.*.replicas.schedule", [_window]),
    *overridable("models.*.replicas.wake", [lambda c: {"schedule": _cron(c), "duration": "3h"}]),
    *overridable("models.*.slo", [_slo]),
    *overridable("models.*.traffic", [_traffic]),
    *overridable("models.*.autoscaling", [_autoscaling]),
    *overridable("models.*.gpus", INTS),
    *overridable("models.*.pool", ["l4", "h100", "nope", "", "A"]),
    *overridable("gpu_pools.*.nodes", [_minmax(INTS)]),
    *overridable("gpu_pools.*.gpu", [_pool_gpu]),
    *overridable("gpu_pools.*.zones", [_zones]),
    *overridable("gpu_pools.*.gpus_per_node", INTS),
    *overridable("gpu_pools.*.spare_gpus", INTS),
    *overridable("gpu_pools.*.instance_type", INSTANCE_TYPES),
    Surface("config:model-store-reads.allowed_store_endpoints.*", [_config_list]),
    Surface("config:model-store-reads.allowed_model_stores.*", [_config_list]),
    Surface("config:in-cluster-clients.allowed_client_namespaces", [{"*": ["apps"]}, {"*": "x"}]),
    Surface("*", GENERIC),
)
"""What the fuzzer writes: one line per field. A pool value is a value or a function of the
case that returns one (and may make files in the case's folder)."""

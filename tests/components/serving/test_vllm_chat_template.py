"""A vLLM chat template reaches vLLM only as the file inferplane writes: ConfigMap
``<model>-chat-template``, mounted read-only, whose path is the one ``--chat-template``
value. vLLM opens any value as a path first (`vllm.CHAT_TEMPLATE_DIR`), so the blueprint's
text never becomes an argument that could name another file of the pod."""

from __future__ import annotations

import dataclasses
import hashlib

from serving_fixtures import (
    CONFIG_MAP,
    DEPLOYMENT,
    JOB,
    args_of,
    container,
    k8s_object,
    pod_spec,
    serve,
    with_model,
)

from inferplane.blueprint.model import Environment
from inferplane.components.serving.vllm.vllm import vllm_args
from inferplane.components.serving.vllm.vllm_compile import compile_key, job_name

TEMPLATE = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
FILE = f"chat-template-{hashlib.sha256(TEMPLATE.encode()).hexdigest()[:12]}.jinja"
PATH = f"/etc/inferplane/chat-template/{FILE}"
VOLUME = {"name": "chat-template", "configMap": {"name": "chat-template-cm"}}
MOUNT = {"name": "chat-template", "mountPath": "/etc/inferplane/chat-template", "readOnly": True}


def _with_template(env: Environment, text: str = TEMPLATE) -> Environment:
    settings = env.models["chat"].vllm
    assert settings is not None
    return with_model(env, "chat", vllm=dataclasses.replace(settings, chat_template=text))


def test_the_template_is_passed_as_its_mounted_file_never_as_text(staging: Environment) -> None:
    args = vllm_args(args_of(_with_template(staging), "chat")[1])
    at = args.index("--chat-template")
    assert args[at : at + 2] == ["--chat-template", PATH]
    assert TEMPLATE not in args


def test_a_path_given_as_template_is_only_the_text_of_the_file(staging: Environment) -> None:
    """Whatever the text, the argument is inferplane's own file: even a value naming a file
    of the pod (which validation refuses) would be served as the words of that path."""
    secret = "/var/run/secrets/eks.amazonaws.com/serviceaccount/token"
    args = vllm_args(args_of(_with_template(staging, secret), "chat")[1])
    assert secret not in args
    assert args[args.index("--chat-template") + 1].startswith("/etc/inferplane/chat-template/")


def test_serving_pods_mount_the_template_config_map_read_only(staging: Environment) -> None:
    rec = serve(_with_template(staging), ["chat"])
    cm = k8s_object(rec, CONFIG_MAP, "chat-chat-template")
    assert cm.get("data") == {FILE: TEMPLATE}
    chat = k8s_object(rec, DEPLOYMENT, "chat")
    assert {**VOLUME, "configMap": {"name": "chat-chat-template"}} in pod_spec(chat)["volumes"]
    assert MOUNT in container(chat, "vllm")["volumeMounts"]
    assert cm.urn in chat.depends_on


def test_the_compile_job_reads_the_same_file(staging: Environment) -> None:
    env = _with_template(staging)
    rec = serve(env, ["chat"])
    serving_env, model = args_of(env, "chat")
    job = k8s_object(rec, JOB, job_name(model, compile_key(serving_env, model)))
    compile_container = container(job, "compile", init=True)
    assert PATH in compile_container["command"]
    assert MOUNT in compile_container["volumeMounts"]
    assert {**VOLUME, "configMap": {"name": "chat-chat-template"}} in pod_spec(job)["volumes"]
    cm = k8s_object(rec, CONFIG_MAP, "chat-chat-template")
    assert cm.urn in job.depends_on


def test_without_a_template_there_is_no_config_map_nor_volume(staging: Environment) -> None:
    rec = serve(staging, ["chat"])
    names = [r.get("metadata", "name") for r in rec.of_type(CONFIG_MAP)]
    assert [n for n in names if "chat-template" in n] == []
    chat = k8s_object(rec, DEPLOYMENT, "chat")
    assert all(v["name"] != "chat-template" for v in pod_spec(chat)["volumes"])
    assert "--chat-template" not in container(chat, "vllm")["args"]

"""The configs for real clusters parse and carry the settings cluster/README.md promises."""

from pathlib import Path

import yaml

CLUSTER = Path(__file__).resolve().parents[2] / "cluster"


def load(name):
    return yaml.safe_load((CLUSTER / name).read_text())


def test_ray_up_cloud():
    c = load("ray-cluster.yaml")
    assert c["provider"]["type"] == "aws"
    assert c["available_node_types"]["head"]["resources"] == {"CPU": 0}
    assert c["head_node_type"] in c["available_node_types"]
    assert any("make install" in cmd for cmd in c["setup_commands"])
    assert all(
        "RAY_AUTH_MODE=disabled" in cmd
        for cmd in c["head_start_ray_commands"] + c["worker_start_ray_commands"]
        if cmd.startswith("RAY_AUTH_MODE") or "ray start" in cmd
    )
    assert any("--dashboard-host=127.0.0.1" in cmd for cmd in c["head_start_ray_commands"])


def test_ray_up_onprem():
    c = load("ray-cluster-onprem.yaml")
    assert c["provider"]["type"] == "local"
    assert c["provider"]["head_ip"] and len(c["provider"]["worker_ips"]) >= 1
    assert any("make install" in cmd for cmd in c["setup_commands"])


def test_kuberay_manifests():
    rc = load("kuberay/raycluster.yaml")
    assert (rc["apiVersion"], rc["kind"]) == ("ray.io/v1", "RayCluster")
    assert rc["spec"]["rayVersion"] == "2.60.0"
    head = rc["spec"]["headGroupSpec"]
    assert head["rayStartParams"]["num-cpus"] == "0"
    assert {"name": "RAY_AUTH_MODE", "value": "disabled"} in head["template"]["spec"]["containers"][0]["env"]
    job = load("kuberay/rayjob.yaml")
    assert (job["apiVersion"], job["kind"]) == ("ray.io/v1", "RayJob")
    assert job["spec"]["entrypoint"].startswith("python -m sweeps -m +experiment=")
    assert "results_dir=/results" in job["spec"]["entrypoint"]
    assert yaml.safe_load(job["spec"]["runtimeEnvYAML"])["env_vars"]["RAY_AUTH_MODE"] == "disabled"

"""How many llama.cpp threads the embedded model uses: physical cores in the affinity mask,
capped by a cgroup CPU quota, or EMPATH_LOCAL_THREADS."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from empath_gate.llm import local

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="Linux CPU affinity")
CPUS = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []


def fake_sys(root: Path, core_of: dict[int, int], quota: str | None = None) -> Path:
    for cpu, core in core_of.items():
        topo = root / f"sys/devices/system/cpu/cpu{cpu}/topology"
        topo.mkdir(parents=True)
        (topo / "physical_package_id").write_text("0\n")
        (topo / "core_id").write_text(f"{core}\n")
    if quota is not None:
        (root / "sys/fs/cgroup").mkdir(parents=True)
        (root / "sys/fs/cgroup/cpu.max").write_text(quota + "\n")
    return root


def test_local_threads_count_physical_cores_of_the_affinity_mask(tmp_path: Path) -> None:
    assert local.usable_cores(fake_sys(tmp_path / "a", {c: c for c in CPUS})) == len(CPUS)
    # every CPU a hyper-thread of one core: one thread
    assert local.usable_cores(fake_sys(tmp_path / "b", {c: 0 for c in CPUS})) == 1
    # no topology files: each CPU counts
    assert local.usable_cores(tmp_path / "none") == len(CPUS)


def test_local_threads_respect_a_cgroup_quota(tmp_path: Path) -> None:
    cores = {c: c for c in CPUS}
    assert local.usable_cores(fake_sys(tmp_path / "a", cores, "max 100000")) == len(CPUS)
    assert local.usable_cores(fake_sys(tmp_path / "b", cores, "50000 100000")) == 1
    assert local.usable_cores(fake_sys(tmp_path / "c", cores, "150000 100000")) == min(2, len(CPUS))


def test_local_threads_setting_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EMPATH_LOCAL_THREADS", "3")
    assert local._threads() == 3
    monkeypatch.setenv("EMPATH_LOCAL_THREADS", "")
    assert local._threads() == local.usable_cores()


def test_local_openmp_spin_is_bounded_unless_the_environment_chose(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    local._omp_environment()
    assert os.environ["GOMP_SPINCOUNT"] == local.GOMP_SPINCOUNT
    monkeypatch.delenv("GOMP_SPINCOUNT")
    monkeypatch.setenv("OMP_WAIT_POLICY", "PASSIVE")
    local._omp_environment()
    assert "GOMP_SPINCOUNT" not in os.environ and os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    monkeypatch.setenv("GOMP_SPINCOUNT", "5")
    local._omp_environment()
    assert os.environ["GOMP_SPINCOUNT"] == "5"

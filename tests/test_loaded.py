"""Versions as the import system loads them (``jaxcompat.plugin.loaded.scan``): the first distribution of
a name on sys.path, with the copies behind it named. Small fake distributions, no jax."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from jaxcompat.plugin.loaded import canonical, describe_shadowed, scan


def dist(site: Path, name: str, version: str, module: str | None = None) -> Path:
    site.mkdir(parents=True, exist_ok=True)
    info = site / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    if module is not None:
        (site / module).mkdir()
        (site / module / "__init__.py").write_text(f'__version__ = "{version}"\n')
    return site


def test_the_first_copy_on_the_path_is_the_one_loaded(tmp_path):
    over = dist(tmp_path / "over", "equinox", "0.13.2")
    base = dist(dist(tmp_path / "base", "equinox", "0.13.5"), "jax", "0.10.1")
    found = scan([str(over), str(base)])
    assert found["distributions"] == {"equinox": "0.13.2", "jax": "0.10.1"}
    assert found["sites"] == [str(over), str(base)] and found["site_of"] == {"equinox": 1, "jax": 2}
    assert found["shadowed"] == [{"name": "equinox", "version": "0.13.5", "site": 2, "by_version": "0.13.2",
                                  "by_site": 1}]
    assert describe_shadowed(found["shadowed"][0]) == "equinox 0.13.5 in site dir 2 is shadowed by 0.13.2 in site dir 1"
    # the other order loads the other copy
    assert scan([str(base), str(over)])["distributions"]["equinox"] == "0.13.5"


def test_folders_without_distributions_and_repeats_are_not_site_dirs(tmp_path):
    site = dist(tmp_path / "site", "Jax_Cuda13.Plugin", "0.11.2")
    (tmp_path / "empty").mkdir()
    link = tmp_path / "link"
    link.symlink_to(site, target_is_directory=True)
    found = scan([str(tmp_path / "empty"), str(site), str(link), str(tmp_path / "missing")])
    assert found["sites"] == [str(site)] and found["shadowed"] == []  # the same folder twice is one copy
    assert found["distributions"] == {"jax-cuda13-plugin": "0.11.2"}
    assert canonical("Jax_Cuda13.Plugin") == "jax-cuda13-plugin"


def test_scan_agrees_with_import_in_a_layered_interpreter(tmp_path):
    """The real import system, through a .pth line as in a layered virtualenv: what `import`
    gives is what scan reports, and importlib.metadata.version() is the one that disagrees."""
    over = dist(tmp_path / "over", "equinox", "0.13.2", module="equinox")
    base = dist(tmp_path / "base", "equinox", "0.13.5", module="equinox")
    (over / "zz-base.pth").write_text(str(base) + "\n")
    code = ("import site, sys, json; site.addsitedir(sys.argv[1]); sys.path.insert(0, sys.argv[2]);"
            "import equinox; from jaxcompat.plugin.loaded import scan;"
            "print(json.dumps([equinox.__version__, scan()['distributions']['equinox'], scan()['shadowed']]))")
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-S", "-c", code, str(over), str(root)], capture_output=True, text=True,
                         timeout=60, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    imported, scanned, shadowed = __import__("json").loads(out.stdout)
    assert imported == scanned == "0.13.2"
    assert [(s["version"], s["by_version"]) for s in shadowed] == [("0.13.5", "0.13.2")]


def test_the_plugin_inside_a_cell_records_what_import_loads(tmp_path):
    """The pytest plugin's env event (a built cell's versions) uses the same reader: with two
    copies of equinox on PYTHONPATH it records the first and names the second as shadowed."""
    over = dist(tmp_path / "over", "equinox", "0.13.2", module="equinox")
    base = dist(tmp_path / "base", "equinox", "0.13.5", module="equinox")
    tests = tmp_path / "t"
    tests.mkdir()
    (tests / "test_x.py").write_text(
        "def test_loaded():\n    import equinox\n    assert equinox.__version__ == '0.13.2'\n"
    )
    events = tmp_path / "events.jsonl"
    root = Path(__file__).resolve().parent.parent
    env = {"PATH": "/usr/bin:/bin", "JAXCOMPAT_RESULTS": str(events), "JAXCOMPAT_IMPORTS": "equinox",
           "JAXCOMPAT_BACKEND": "cpu", "PYTHONPATH": os.pathsep.join([str(over), str(base), str(root)]),
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "jaxcompat.plugin.pytest_plugin",
            "-p",
            "no:cacheprovider",
            str(tests),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    (env_event,) = [e for e in map(json.loads, events.read_text().splitlines()) if e["event"] == "env"]
    assert env_event["versions"]["equinox"] == "0.13.2" and env_event["imports"] == {"equinox": "ok"}
    assert env_event["shadowed"] == [{"name": "equinox", "version": "0.13.5", "site": 2, "by_version": "0.13.2",
                                      "by_site": 1}]

"""The installed wheel works outside the checkout (issue 17, item 4).

The test builds the wheel from a copy of the checkout (``pip wheel --no-deps --no-build-isolation``: offline,
with the setuptools and wheel of the dev extras), installs it with ``--no-deps --no-index`` into a fresh
virtual environment in a temporary folder, and runs the installed ``gpt2viz`` script from another temporary
folder, with HOME, the config folders and PYTHONPATH pointing nowhere near the checkout: ``gpt2viz models``,
``gpt2viz run``, ``gpt2viz snapshot`` (PNG) and ``gpt2viz snapshot --lang zh`` (SVG).

Dependencies: /opt/wheels holds only torch and the CI machine installs the rest from PyPI once (.ci/run), so
the fresh environment cannot install numpy / onnxruntime / PySide6 offline. Instead of
``--system-site-packages`` (which would expose the base interpreter's packages, not the environment running
the tests, where the dependencies are), a ``.pth`` line in the fresh environment names the running
environment's site-packages. Lines of a ``.pth`` file only extend ``sys.path``; the ``.pth`` files found there
(an editable install of gpt2viz, as CI makes) are not run, and the fresh site-packages comes first: the test
asserts that gpt2viz is imported from the wheel.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PROMPT = "The capital of France is"


def _sh(args, **kw) -> subprocess.CompletedProcess:
    r = subprocess.run(args, capture_output=True, text=True, timeout=300, **kw)
    assert r.returncode == 0, f"{args}: exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    return r


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(the venv's bin folder, a clean environment, a working folder outside the checkout)."""
    for mod in ("setuptools", "wheel"):
        pytest.importorskip(mod, reason=f"building the wheel offline needs {mod} (a dev extra)")
    root = tmp_path_factory.mktemp("wheel")
    src = root / "src"
    shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(".git", "__pycache__", "build", "dist", "*.egg-info",
                                                             ".pytest_cache", "*.pyc", "bench", "docs"))
    dist = root / "dist"
    _sh([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
         "-w", str(dist), str(src)], cwd=src)
    wheel = next(dist.glob("gpt2viz-*.whl"))
    venv = root / "venv"
    _sh([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    py = venv / "bin" / "python"
    site = Path(_sh([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    parent = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "_gpt2viz_test_deps.pth").write_text("".join(p + "\n" for p in sorted(parent)))
    # --ignore-installed: the running environment (seen through the .pth) may hold gpt2viz itself, an
    # editable install as CI makes; pip would call the wheel "already satisfied" and install nothing.
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    _sh([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "--no-index", "--ignore-installed",
         "-q", str(wheel)], env=clean)
    home = root / "home"
    work = root / "elsewhere"
    home.mkdir()
    work.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "GPT2VIZ_MODELS", "VIRTUAL_ENV", "PYTHONHOME", "QT_PLUGIN_PATH")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local/share"),
               QT_QPA_PLATFORM="offscreen", PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}")
    return venv, env, work


def _run(installed, *args) -> subprocess.CompletedProcess:
    venv, env, work = installed
    return _sh([str(venv / "bin" / "gpt2viz"), *args], cwd=work, env=env)


def test_the_wheel_imports_from_the_fresh_environment(installed):
    venv, env, work = installed
    r = _sh([str(venv / "bin" / "python"), "-c",
             "import gpt2viz, json; from gpt2viz.core.model_folder import locations as l; from gpt2viz.app import i18n; "
             "print(json.dumps([gpt2viz.__file__, str(l.bundled_models_dir()), str(l.resources_dir()), "
             "str(i18n.translations_dir())]))"], cwd=work, env=env)
    pkg, models, resources, translations = map(Path, json.loads(r.stdout))
    share = venv / "share" / "gpt2viz"
    assert pkg.is_relative_to(venv), pkg  # not the checkout
    assert models == share / "models" and (models / "atlas" / "model.onnx").is_file()
    assert resources == share / "resources" and (resources / "icons" / "gpt2viz.svg").is_file()
    assert (translations / "gpt2viz_zh_CN.qm").is_file()


def test_models_finds_the_bundled_atlas(installed):
    venv, _env, _work = installed
    r = _run(installed, "models", "--json")
    rows = json.loads(r.stdout)
    atlas = next(row for row in rows if row["name"] == "atlas")
    assert Path(atlas["folder"]) == venv / "share" / "gpt2viz" / "models" / "atlas"


def test_run_generates_with_the_bundled_model_as_the_checkout_does(installed, capsys):
    from gpt2viz.cli import main

    r = _run(installed, "run", "--prompt", PROMPT, "--steps", "3", "--temperature", "0", "--json")
    assert [ln for ln in r.stderr.splitlines() if not ln.startswith("note: using the bundled")] == [], r.stderr
    assert main(["run", "--prompt", PROMPT, "--steps", "3", "--temperature", "0", "--json"]) == 0
    here = capsys.readouterr().out

    def strip(text):  # the same tokens and probabilities; times and folders differ
        return [{k: v for k, v in json.loads(line).items() if k not in ("ms", "elapsed_ms")}
                for line in text.splitlines() if line.startswith("{")]
    assert strip(r.stdout) == strip(here) and len(strip(here)) >= 3


def test_snapshot_png_and_a_chinese_svg(installed):
    _venv, _env, work = installed
    r = _run(installed, "snapshot", "--prompt", PROMPT, "--view", "attention", "--out", "a.png")
    assert (work / "a.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert r.stderr == "", r.stderr  # no Qt plugin chatter
    r = _run(installed, "snapshot", "--prompt", PROMPT, "--view", "pipeline", "--lang", "zh", "--out", "zh.svg")
    assert r.stderr == "", r.stderr
    svg = (work / "zh.svg").read_text(encoding="utf-8")
    assert len(re.findall(r"[\u4e00-\u9fff]", svg)) >= 10, "the Chinese catalogue was not found"
    en = _run(installed, "snapshot", "--prompt", PROMPT, "--view", "pipeline", "--out", "en.svg")
    assert not re.findall(r"[\u4e00-\u9fff]", (work / "en.svg").read_text(encoding="utf-8")), en.stdout

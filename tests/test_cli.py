import json
import os
import subprocess
import sys

import onnxruntime as ort
import pytest
import torch

from gpt2viz.cli import main


def run_cli(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_run_json_is_deterministic_and_greedy_matches_transformers(capsys, exported, torch_models):
    args = ["run", "--prompt", "The capital of France is", "--model", str(exported["l3h4e32"]),
            "--steps", "6", "--temperature", "0", "--json"]
    code, out, _ = run_cli(capsys, *args)
    assert code == 0
    steps = [json.loads(line) for line in out.splitlines()]
    assert [s["step"] for s in steps] == [1, 2, 3, 4, 5, 6]
    assert len(steps[0]["top"]) == 10 and steps[0]["top"][0]["id"] == steps[0]["token_id"]
    want = torch_models["l3h4e32"].generate(torch.tensor([[464, 3139, 286, 4881, 318]]), max_new_tokens=6,
                                            do_sample=False, pad_token_id=0,
                                            attention_mask=torch.ones(1, 5, dtype=torch.long))
    assert [s["token_id"] for s in steps] == want[0, 5:].tolist()


def test_run_sampled_is_repeatable(capsys, tiny_model_dir):
    args = ["run", "--prompt", "Hello", "--model", str(tiny_model_dir), "--steps", "5", "--temperature", "1.3",
            "--top-k", "40", "--top-p", "0.9", "--seed", "7", "--json"]
    first = run_cli(capsys, *args)[1]
    ids = lambda out: [json.loads(x)["token_id"] for x in out.splitlines()]  # noqa: E731
    assert ids(first) == ids(run_cli(capsys, *args)[1])


def test_run_text_output(capsys, tiny_model_dir):
    code, out, _ = run_cli(capsys, "run", "--prompt", "Hi", "--model", str(tiny_model_dir), "--steps", "2")
    assert code == 0 and "step 1:" in out and out.splitlines()[-1].startswith("text: Hi")


def test_tokenize_json(capsys, tiny_model_dir):
    code, out, _ = run_cli(capsys, "tokenize", " unbelievable你", "--json", "--model", str(tiny_model_dir))
    toks = json.loads(out)
    assert code == 0 and toks[0]["id"] == 24479 and toks[0]["display"] == "\u2423unbelievable"
    assert toks[1]["partial"] and toks[1]["display"] == "你[1-2/3]"


@pytest.mark.parametrize("args,parse_error", [
    (["run", "--prompt", "x", "--temperature", "-1"], False),
    (["run", "--prompt", "x", "--temperature", "hot"], True),
    (["run", "--prompt", "x", "--top-p", "0"], False),
    (["run", "--prompt", "x", "--top-k", "-3"], False),
    (["run", "--prompt", "x", "--steps", "-1"], False),
    (["run", "--prompt", "x", "--model", "/no/such/model"], False),
    (["run"], True),
    (["frobnicate"], True),
    (["export", "/no/such/checkpoint", "--out", "/tmp/never-written"], False),
])
def test_bad_input_exits_2_with_one_line(capsys, tiny_model_dir, args, parse_error):
    if args[0] == "run" and "--model" not in args:
        args = [*args, "--model", str(tiny_model_dir)]
    if parse_error:  # argparse exits itself; ours prints one line and status 2 too
        with pytest.raises(SystemExit) as e:
            main(args)
        code, err = e.value.code, capsys.readouterr().err
    else:
        code, _, err = run_cli(capsys, *args)
    assert code == 2
    assert err.strip().startswith("gpt2viz: error:") and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_over_long_prompt_is_a_clear_error(capsys, tiny_model_dir):
    code, _, err = run_cli(capsys, "run", "--prompt", "word " * 100, "--model", str(tiny_model_dir))
    assert code == 2 and "reads at most 32" in err


def test_models_lists_exported_folders(capsys, exported, monkeypatch):
    monkeypatch.setenv("GPT2VIZ_MODELS", str(exported["l2h2e16"].parent))
    code, out, _ = run_cli(capsys, "models", "--json")
    names = [r["name"] for r in json.loads(out)]
    assert code == 0 and {"l2h2e16", "l3h4e32", "l1h1e8"} <= set(names)
    code, out, _ = run_cli(capsys, "run", "--prompt", "Hi", "--model", "l1h1e8", "--steps", "1")
    assert code == 0


def test_module_and_script_entry_points(tiny_model_dir):
    for cmd in ([sys.executable, "-m", "gpt2viz"], [sys.executable, "-c", "from gpt2viz.cli import main; raise SystemExit(main())"]):
        p = subprocess.run([*cmd, "tokenize", "Hello world", "--json", "--model", str(tiny_model_dir)],
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        assert [t["id"] for t in json.loads(p.stdout)] == [15496, 995]
    p = subprocess.run([sys.executable, "-m", "gpt2viz", "run", "--prompt", "x", "--top-p", "7",
                        "--model", str(tiny_model_dir)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "Traceback" not in p.stderr


def test_run_with_ablations_json_reports_ms_and_interventions(capsys, exported):
    model = str(exported["l3h4e32"])
    base = ["run", "--prompt", "The capital of France is", "--model", model, "--steps", "2", "--temperature", "0", "--json"]
    code, out, _ = run_cli(capsys, *base)
    plain = [json.loads(x) for x in out.splitlines()]
    code, out, _ = run_cli(capsys, *base, "--ablate-head", "1.2", "--ablate-head", "0.0", "--mean-ablate-head", "2.1",
                           "--ablate-neuron", "2.47")
    steps = [json.loads(x) for x in out.splitlines()]
    assert code == 0 and len(steps) == 2
    for s in steps:
        assert {"step", "position", "token_id", "token", "prob", "sampled_prob", "top", "ms", "interventions"} <= set(s)
        assert s["ms"] > 0
    kinds = [(i["kind"], i["layer"]) for i in steps[0]["interventions"]]
    assert kinds == [("head_ablation", 1), ("head_ablation", 0), ("head_ablation", 2), ("neuron_ablation", 2)]
    assert steps[0]["interventions"][2]["mode"] == "mean"
    assert plain[0]["interventions"] == [] and steps[0]["prob"] != plain[0]["prob"]


@pytest.mark.parametrize("flag,spec,msg", [("--ablate-head", "3.0", "layer 3"), ("--ablate-head", "0.4", "head 4"),
                                           ("--ablate-neuron", "0.48", "neuron 48"), ("--ablate-head", "x", "malformed"),
                                           ("--mean-ablate-head", "1.2.3", "malformed")])
def test_bad_intervention_specs_exit_2(capsys, exported, flag, spec, msg):
    code, _, err = run_cli(capsys, "run", "--prompt", "Hi", "--model", str(exported["l3h4e32"]), flag, spec)
    assert code == 2 and msg in err and len(err.strip().splitlines()) == 1


def test_patch_json_table(capsys, exported):
    code, out, _ = run_cli(capsys, "patch", "--clean", "The capital of France is", "--corrupt",
                           "The capital of Germany is", "--site", "resid_pre", "--target", " Paris",
                           "--model", str(exported["l3h4e32"]), "--json")
    t = json.loads(out)
    assert code == 0 and t["site"] == "resid_pre" and t["target_id"] == 6342 and t["target"] == " Paris"
    assert t["tokens"]["corrupt"][3] == " Germany" and t["layers"] == [0, 1, 2] and t["positions"] == [0, 1, 2, 3, 4]
    assert len(t["prob"]) == 3 and len(t["prob"][0]) == 5 and len(t["metric"][2]) == 5
    # patching the whole residual at the differing token in block 0 restores the clean run exactly
    assert t["metric"][0][3] == pytest.approx(1.0, abs=1e-4)
    assert t["metric"][0][0] == pytest.approx(0.0, abs=1e-6)  # positions that agree change nothing
    assert {"clean_prob", "corrupt_prob", "ms"} <= set(t)
    code, out, _ = run_cli(capsys, "patch", "--clean", "The capital of France is", "--corrupt",
                           "The capital of Germany is", "--site", "head", "--target", " Paris",
                           "--model", str(exported["l3h4e32"]))
    assert code == 0 and "head 3" in out and "best:" in out


def test_patch_unequal_lengths_exit_2_with_both_tokenisations(capsys, tiny_model_dir):
    code, _, err = run_cli(capsys, "patch", "--clean", "The capital of France is", "--corrupt", "The capital of the USA is",
                           "--site", "mlp_out", "--target", " Paris", "--model", str(tiny_model_dir))
    assert code == 2 and "clean 5 [The|␣capital|␣of|␣France|␣is]" in err and "corrupt 6" in err
    assert len(err.strip().splitlines()) == 1


def test_export_upgrade_refuses_a_current_folder(capsys, tiny_model_dir):
    code, _, err = run_cli(capsys, "export", str(tiny_model_dir), "--upgrade")
    assert code == 2 and "already format version 3" in err and len(err.strip().splitlines()) == 1


def test_run_json_first_ms_is_the_prefills_forward_time(capsys, monkeypatch, exported):
    """Line 1's ``ms`` is the prompt's forward call, each later line's the step before it (issue 11)."""
    import time

    from gpt2viz.core.engine import model as runtime

    real = runtime.Model.run
    slow = {"prefill": 0.25, "step": 0.0}

    def run(self, ids, past=None, **kw):
        time.sleep(slow["prefill"] if past is None else slow["step"])
        return real(self, ids, past, **kw)

    monkeypatch.setattr(runtime.Model, "run", run)
    code, out, _ = run_cli(capsys, "run", "--prompt", "The capital of France is", "--model", str(exported["l3h4e32"]),
                           "--steps", "3", "--temperature", "0", "--json")
    steps = [json.loads(x) for x in out.splitlines()]
    assert code == 0 and len(steps) == 3
    assert steps[0]["ms"] >= 250  # the prefill's time, not a step's
    assert all(s["ms"] < 250 for s in steps[1:])
    assert [s["ms"] for s in steps[1:]] == [s["elapsed_ms"] for s in steps[:-1]]


# Minimal arguments of every subcommand that takes --model (a new one must be added here).
MODEL_COMMANDS = {
    "tokenize": ["hi"], "run": ["--prompt", "x"], "snapshot": ["--prompt", "x", "--view", "chart", "--out", "o.png"],
    "report": ["--prompt", "x", "--out", "o.pdf"], "attribute": ["--prompt", "x"],
    "patch": ["--clean", "a", "--corrupt", "b", "--site", "head", "--target", "x"],
    "edit": ["--prompt", "x", "--subject", "s", "--target", "t"], "features": ["--prompt", "x"],
    "train-sae": ["--hook", "h", "--out", "o"],
    "graph": ["--prompt", "x", "--transcoders", "d", "--out", "o.json"],
    "sae-dashboards": [],
}


def _parse(*args):
    from gpt2viz.cli import build_parser

    return build_parser().parse_args(list(args))


def _commands_taking(option: str) -> set[str]:
    from gpt2viz.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return {name for name, p in sub.choices.items() if any(option in a.option_strings for a in p._actions)}


def test_every_command_with_model_is_listed():
    assert _commands_taking("--model") == set(MODEL_COMMANDS)


@pytest.mark.parametrize("command", sorted(MODEL_COMMANDS))
def test_model_before_the_subcommand_is_honoured(command):
    """`gpt2viz --model X CMD` used to run CMD on the default model: the subcommand's default overwrote X."""
    args = MODEL_COMMANDS[command]
    assert _parse("--model", "/my/model", command, *args).model == "/my/model"
    assert _parse(command, *args, "--model", "/my/model").model == "/my/model"
    assert _parse(command, *args).model is None  # the default model, as before
    assert _parse("--model", "/my/model", command, *args, "--model", "/my/model").model == "/my/model"


@pytest.mark.parametrize("command", ["tokenize", "snapshot"])
def test_two_different_models_are_refused(capsys, command):
    with pytest.raises(SystemExit) as e:
        _parse("--model", "one", command, *MODEL_COMMANDS[command], "--model", "two")
    err = capsys.readouterr().err
    assert e.value.code == 2 and "--model is given both before and after" in err and "give it once" in err


def test_an_option_before_a_command_that_does_not_take_it_is_refused(capsys):
    for args, says in ((["--model", "x", "export", "gpt2"], "--model before 'export' is an option of the app"),
                       (["--journey", "2", "models"], "--journey before 'models'"),
                       (["--steps", "3", "train-sae", "--hook", "h", "--out", "o"],
                        "'train-sae' has its own --steps: put it after 'train-sae'")):
        with pytest.raises(SystemExit) as e:
            _parse(*args)
        err = capsys.readouterr().err
        assert e.value.code == 2 and says in err and len(err.strip().splitlines()) == 1, err


def test_the_apps_options_before_a_subcommand_apply_to_it():
    a = _parse("--prompt", "Hi", "--steps", "3", "--lang", "zh", "--ablate-head", "1.0", "snapshot", "--view", "chart",
               "--out", "o.png", "--ablate-head", "0.1")
    assert (a.prompt, a.steps, a.lang, a.ablate_head) == ("Hi", 3, "zh", ["1.0", "0.1"])  # repeatable flags add up
    a = _parse("snapshot", "--prompt", "Hi", "--view", "chart", "--out", "o.png")
    assert (a.steps, a.lang, a.ablate_head) == (0, "en", [])  # the subcommand's own defaults
    a = _parse("--model", "m", "--prompt", "Hi", "--steps", "2")  # the app itself
    assert (a.command, a.model, a.prompt, a.steps, a.lang, a.journey) == (None, "m", "Hi", 2, None, None)


def test_model_before_snapshot_reaches_the_command(capsys):
    """End to end: the model named before the subcommand is the one opened (here: one that does not exist)."""
    code, _, err = run_cli(capsys, "--model", "/no/such/model", "snapshot", "--prompt", "x", "--view", "chart",
                           "--out", "/tmp/gpt2viz-never.png")
    assert code == 2 and "/no/such/model" in err
    code, _, err = run_cli(capsys, "--model", "/no/such/model", "tokenize", "hi")
    assert code == 2 and "/no/such/model" in err


@pytest.mark.skipif("CUDAExecutionProvider" in ort.get_available_providers(),
                    reason="onnxruntime has a CUDA provider here: the refusal cannot happen")
@pytest.mark.parametrize("args", [["run", "--prompt", "Hi"], ["--device", "cuda", "tokenize", "Hi"],
                                  ["snapshot", "--prompt", "Hi", "--view", "chart", "--out", "x.png"], []])
def test_device_cuda_without_a_cuda_provider_exits_2_with_one_line(args, tmp_path):
    """Every command and the app (no command): status 2 and one line saying why, before any model or window."""
    argv = [*args, "--device", "cuda"] if "--device" not in args else args
    p = subprocess.run([sys.executable, "-m", "gpt2viz", *argv], capture_output=True, text=True, timeout=120,
                       check=False, cwd=tmp_path, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert p.returncode == 2 and p.stdout == ""
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert "CUDA execution provider" in lines[0] and "onnxruntime-gpu" in lines[0] and "gpu" in lines[0]

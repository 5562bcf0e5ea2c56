"""The `gpt2viz` command line: the app, plus headless tokenize / run / export / models."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from gpt2viz import __version__
from gpt2viz.core.engine.device import DEVICES

EXIT_USAGE = 2


class CliError(Exception):
    """A problem with the user's input: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line and status 2, like every other bad-input case
        self.exit(EXIT_USAGE, f"gpt2viz: error: {message} (see `{self.prog} --help`)\n")


_GLOBAL = "_global_"  # prefix of the namespace names an option given before the subcommand is parsed into
# Options spelled the same before and after a subcommand but meaning another thing there: refused before it.
_OTHER_MEANING = {("train-sae", "steps")}  # the app's tokens to generate vs. optimisation steps


class _TopParser(_Parser):
    """The `gpt2viz` parser: an option given before the subcommand applies to it, or is refused.

    argparse alone would let the subcommand's default overwrite it (``gpt2viz --model X snapshot`` used
    the default model). So the app's options are parsed under names of their own, the subcommands'
    shared options without defaults, and :meth:`_merge` decides afterwards: an option the subcommand
    also takes (with the same meaning) is honoured (repeatable flags add up; two different values are
    refused), one it does not take is refused with a message.
    """

    def setup_shared(self, sub: argparse._SubParsersAction) -> None:
        """Call once every option and subcommand is defined."""
        self._app_defaults: dict[str, object] = {}
        for act in self._actions:
            if not act.option_strings or act.dest in ("help", "version"):
                continue
            if act.metavar is None and act.choices is None and act.nargs != 0:
                act.metavar = act.dest.upper()  # the help text keeps the option's own name
            self._app_defaults[act.dest] = act.default
            act.dest, act.default = _GLOBAL + act.dest, argparse.SUPPRESS
        self._subs = dict(sub.choices)
        self._sub_defaults: dict[str, dict[str, object]] = {}
        self._sub_required: dict[str, dict[str, str]] = {}
        for name, parser in self._subs.items():
            defaults, required = self._sub_defaults.setdefault(name, {}), self._sub_required.setdefault(name, {})
            parser.usage = parser.format_usage().removeprefix("usage: ").rstrip("\n")  # as argparse wrote it
            for act in parser._actions:
                if act.dest in self._app_defaults and act.option_strings:
                    defaults[act.dest], act.default = act.default, argparse.SUPPRESS
                    if act.required:  # checked after the merge: it may have been given before the subcommand
                        required[act.dest], act.required = act.option_strings[0], False

    def parse_known_args(self, args=None, namespace=None):
        a, rest = super().parse_known_args(args, namespace)
        self._merge(a)
        return a, rest

    def _merge(self, a: argparse.Namespace) -> None:
        cmd = getattr(a, "command", None)
        given = {dest: vars(a).pop(_GLOBAL + dest) for dest in self._app_defaults if hasattr(a, _GLOBAL + dest)}
        if cmd is None:
            for dest, default in self._app_defaults.items():
                setattr(a, dest, given.get(dest, default))
            return
        flag = lambda dest: "--" + dest.replace("_", "-")  # noqa: E731
        takes = self._sub_defaults.get(cmd, {})
        for dest, value in given.items():
            if dest not in takes or (cmd, dest) in _OTHER_MEANING:
                hint = f"; '{cmd}' has its own {flag(dest)}: put it after '{cmd}'" if dest in takes else ""
                self.error(f"{flag(dest)} before '{cmd}' is an option of the app, not of '{cmd}'{hint}")
            if hasattr(a, dest):  # given after the subcommand too
                mine = getattr(a, dest)
                if isinstance(value, list) and isinstance(mine, list):
                    setattr(a, dest, value + mine)  # a repeatable flag: both places count
                elif mine != value:
                    self.error(f"{flag(dest)} is given both before and after '{cmd}' ({value} and {mine}): give it once")
            else:
                setattr(a, dest, value)
        for dest, default in takes.items():
            if not hasattr(a, dest):
                if dest in self._sub_required.get(cmd, {}):
                    self._subs[cmd].error(f"the following arguments are required: {self._sub_required[cmd][dest]}")
                setattr(a, dest, default)


def _add_model(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", metavar="DIR|NAME", help="model folder or name (default: the bundled 'atlas')")
    p.add_argument("--device", choices=DEVICES, default="cpu",
                   help="where the model runs: cpu (default) or cuda (an NVIDIA GPU; needs the gpu extra, "
                        "onnxruntime-gpu)")


LANG_CHOICES = ("en", "zh")


def add_lang(p: argparse.ArgumentParser, default: str | None = None) -> None:
    """``--lang en|zh``: the language of the window or of the pictures' texts (shared by app, snapshot, report).

    ``default`` None means: the language remembered from the Language menu, else the system's.
    Commands that write files pass "en" so a script gets the same pictures on every machine.
    """
    p.add_argument("--lang", choices=LANG_CHOICES, default=default,
                   help="language of the texts: en (English) or zh (简体中文)" +
                   (f" (default {default})" if default else " (default: the last choice, else the system's)"))


def add_ablation_flags(p: argparse.ArgumentParser) -> None:
    """The ablation flags shared by `run` and `snapshot`."""
    p.add_argument("--ablate-head", action="append", default=[], metavar="L.H", help="zero head H of block L (repeatable)")
    p.add_argument("--mean-ablate-head", action="append", default=[], metavar="L.H",
                   help="set head H of block L to its mean over the prompt (repeatable)")
    p.add_argument("--ablate-neuron", action="append", default=[], metavar="L.N",
                   help="zero MLP neuron N of block L (repeatable)")
    p.add_argument("--ablate-attn", action="append", default=[], type=int, metavar="L",
                   help="zero block L's whole attention output, bias included (repeatable)")
    p.add_argument("--mean-ablate-attn", action="append", default=[], type=int, metavar="L",
                   help="set block L's attention output to its mean over the prompt (repeatable)")
    p.add_argument("--ablate-mlp", action="append", default=[], type=int, metavar="L",
                   help="zero block L's whole MLP output, bias included (repeatable)")
    p.add_argument("--mean-ablate-mlp", action="append", default=[], type=int, metavar="L",
                   help="set block L's MLP output to its mean over the prompt (repeatable)")
    p.add_argument("--steer-feature", action="append", default=[], metavar="L.F=VALUE",
                   help="add VALUE x feature F of block L's SAE (the model's own, saes/) to hook_resid_pre at "
                        "every position, generated ones too (repeatable)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; also documents the command line in the README."""
    p = _TopParser(prog="gpt2viz", description="Trace the life of one token through GPT-2. "
                "With no command, opens the desktop app.")
    p.add_argument("--version", action="version", version=f"gpt2viz {__version__}")
    _add_model(p)
    p.add_argument("--prompt", help="open the app with this prompt (it runs at once)")
    p.add_argument("--steps", type=int, default=0, help="with --prompt: take this many steps after the run")
    add_lang(p)
    add_ablation_flags(p)
    p.add_argument("--compare", metavar="TEXT", help="open a second prompt B beside the first")
    p.add_argument("--analysis", choices=["patching", "causal-trace"],
                   help="with --prompt: run activation patching (needs --compare) or the causal trace at once")
    p.add_argument("--subject", metavar="TEXT", help="with --analysis causal-trace: the tokens to corrupt")
    p.add_argument("--journey", nargs="?", type=int, const=1, metavar="PAGE",
                   help="open the guided journey (one stage of the token's life per page), at PAGE 1-13 (default 1)")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    t = sub.add_parser("tokenize", help="show how a text becomes GPT-2 tokens")
    t.add_argument("text")
    t.add_argument("--json", action="store_true", help="one JSON array of tokens")
    _add_model(t)

    r = sub.add_parser("run", help="generate token by token, printing each choice and the top 10 candidates")
    r.add_argument("--prompt", required=True)
    _add_model(r)
    r.add_argument("--steps", type=int, default=10, help="tokens to generate (default 10)")
    r.add_argument("--temperature", type=float, default=1.0, help="0 = greedy (default 1.0)")
    r.add_argument("--top-k", type=int, default=0, help="keep the k most likely tokens; 0 = off (default)")
    r.add_argument("--top-p", type=float, default=1.0, help="nucleus sampling; 1.0 = off (default)")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--json", action="store_true", help="one JSON object per step")
    add_ablation_flags(r)

    pa = sub.add_parser("patch", help="activation patching table: clean state copied into a corrupted run")
    pa.add_argument("--clean", required=True)
    pa.add_argument("--corrupt", required=True)
    pa.add_argument("--site", required=True, choices=["resid_pre", "attn_out", "mlp_out", "head"])
    pa.add_argument("--target", required=True, help="the token whose probability is measured, e.g. ' Paris'")
    _add_model(pa)
    pa.add_argument("--json", action="store_true", help="one JSON object")

    e = sub.add_parser("export", help="export a GPT-2 checkpoint (hub id or local folder) to a model folder")
    e.add_argument("source", help="gpt2, distilgpt2, gpt2-medium, gpt2-large, gpt2-xl, a hub id, or a folder")
    e.add_argument("--out", type=Path, help="model folder to write (default: the user models folder)")
    e.add_argument("--name", help="display name (default: the folder name)")
    e.add_argument("--force", action="store_true", help="replace an existing folder")
    e.add_argument("--upgrade", action="store_true",
                   help="SOURCE is a gpt2viz model folder of an older format: bring it to the current one in place, "
                        "checked hook by hook (intervention inputs, TransformerLens' LayerNorm hooks; no torch needed)")

    sn = sub.add_parser("snapshot", help="render a view of the app to PNG or SVG, headless (same widgets, offscreen)")
    sn.add_argument("--prompt", required=True)
    _add_model(sn)
    sn.add_argument("--steps", type=int, default=0, help="tokens to generate before the picture (default 0)")
    sn.add_argument("--temperature", type=float, default=1.0)
    sn.add_argument("--top-k", type=int, default=0)
    sn.add_argument("--top-p", type=float, default=1.0)
    sn.add_argument("--seed", type=int, default=0)
    from gpt2viz.widgets.view_names import ANALYSIS_VIEWS, VIEWS  # the one table of view names (no Qt import)

    sn.add_argument("--view", required=True, choices=[*VIEWS, *ANALYSIS_VIEWS, "data"],
                    help="what to draw; 'data' writes every hook as .npz + .json; patching needs --corrupt; "
                         "with --compare, chart | lens | attention show A and B side by side")
    add_ablation_flags(sn)
    sn.add_argument("--compare", metavar="TEXT", help="a second prompt B shown beside the first (chart, lens, attention)")
    sn.add_argument("--corrupt", metavar="TEXT", help="the corrupted prompt for --view patching (A is the clean one)")
    sn.add_argument("--site", choices=["resid_pre", "attn_out", "mlp_out", "head"], default="resid_pre",
                    help="--view patching: the state patched (default resid_pre)")
    sn.add_argument("--target", help="patching / causal trace: the token measured (default: the clean run's top token)")
    sn.add_argument("--subject", metavar="TEXT",
                    help="--view causal-trace: the tokens corrupted (default: the longest capitalised word token "
                         "before the last, e.g. ' France'; stderr says which)")
    sn.add_argument("--noise", type=float, default=3.0, help="causal trace: noise in embedding standard deviations (3)")
    sn.add_argument("--samples", type=int, default=10, help="causal trace: noise samples averaged (10)")
    sn.add_argument("--window", type=int, default=1, help="causal trace: layers restored together for MLP/attention (1)")
    sn.add_argument("--layer", type=int, default=0)
    sn.add_argument("--head", type=int, default=0)
    sn.add_argument("--position", type=int, help="selected position (default: the newest token)")
    sn.add_argument("--feature", type=int, metavar="F", help="--view feature: feature F of block --layer's SAE (the "
                    "model's own, saes/)")
    sn.add_argument("--out", required=True, type=Path, help="FILE.png, FILE.svg, FILE.npz, or a folder with --all-layers")
    sn.add_argument("--all-layers", action="store_true", help="one image per layer + contact sheet + index.json")
    sn.add_argument("--format", choices=["png", "svg"], default="png", help="with --all-layers (default png)")
    sn.add_argument("--scale", type=float, default=1.0, help="PNG resolution factor (default 1)")
    sn.add_argument("--force", action="store_true", help="replace existing files")
    add_lang(sn, "en")
    sn.add_argument("--dark", action="store_true", help="dark background (default: light, for paper)")

    rp = sub.add_parser("report", help="the whole life of the next token as one document (PDF, or HTML)")
    rp.add_argument("--prompt", required=True)
    _add_model(rp)
    rp.add_argument("--steps", type=int, default=0, help="tokens to generate first; the report follows the next one")
    rp.add_argument("--temperature", type=float, default=1.0)
    rp.add_argument("--top-k", type=int, default=0)
    rp.add_argument("--top-p", type=float, default=1.0)
    rp.add_argument("--seed", type=int, default=0)
    add_lang(rp, "en")
    rp.add_argument("--dark", action="store_true", help="figures on a dark background")
    rp.add_argument("--out", required=True, type=Path, help="FILE.pdf, or FILE.html (images embedded)")
    rp.add_argument("--force", action="store_true", help="replace an existing file")

    from gpt2viz.commands import attribute
    attribute.add_parser(sub, _add_model)
    from gpt2viz.commands import edit
    edit.add_parser(sub, _add_model)
    from gpt2viz.commands import features, sae_dashboards, train_sae
    features.add_parser(sub, _add_model)
    train_sae.add_parser(sub, _add_model)
    sae_dashboards.add_parser(sub, _add_model)
    from gpt2viz.commands import graph
    graph.add_parser(sub, _add_model)

    m = sub.add_parser("models", help="list the model folders gpt2viz can find")
    m.add_argument("--json", action="store_true")
    p.setup_shared(sub)
    return p


def _open_model(spec: str | None, device: str = "cpu"):
    from gpt2viz.core.model_folder.locations import DEFAULT_MODEL, resolve_model, user_models_dir
    from gpt2viz.core.engine.model import Model

    model = Model(resolve_model(spec), device=device)
    if spec in (None, DEFAULT_MODEL):
        print(f"note: using the bundled demo model '{DEFAULT_MODEL}'; for real GPT-2 run "
              f"`gpt2viz export gpt2` (models are looked up in {user_models_dir()} and $GPT2VIZ_MODELS)",
              file=sys.stderr)
    return model


def _opener(a):
    """``_open_model`` on the command's ``--device``, for the commands that open the model themselves."""
    return lambda spec: _open_model(spec, a.device)


def cmd_tokenize(a) -> int:
    model = _open_model(a.model, a.device)
    infos = model.tokenizer.tokenize(a.text)
    if a.json:
        print(json.dumps([{"id": t.id, "text": t.text, "display": t.display, "bytes": t.bytes.hex(),
                           "byte_span": list(t.byte_span), "partial": t.partial} for t in infos],
                         ensure_ascii=False))
        return 0
    print(f"{len(infos)} tokens ({len(a.text.encode('utf-8'))} bytes)")
    for i, t in enumerate(infos):
        print(f"{i:4d}  {t.id:6d}  {t.display:<20}  {t.bytes.hex(' ')}")
    return 0


def cmd_run(a) -> int:
    from gpt2viz.core.generation.sampling import SamplingSettings, top_k_text
    from gpt2viz.core.generation.stepper import Generator

    if a.steps < 0:
        raise CliError(f"--steps must be ≥ 0, got {a.steps}")
    settings = SamplingSettings(a.temperature, a.top_k, a.top_p, a.seed)
    model = _open_model(a.model, a.device)
    tok = model.tokenizer
    from gpt2viz.commands.interventions import describe_all, from_args

    ivs = from_args(a, model)
    gen = Generator(model, hooks=[], interventions=ivs)  # headless: logits only
    gen.start(tok.encode(a.prompt))
    forward_ms = gen.current.elapsed_ms  # the call that produced the distribution of the next choice
    if not a.json:
        print(f"prompt: {len(gen.tokens)} tokens · model {model.name} · temperature {settings.temperature} · "
              f"top-k {top_k_text(settings.top_k)} · top-p {settings.top_p} · seed {settings.seed}")
    for i in range(a.steps):
        if not gen.can_step():
            print(f"stopped: the context is full ({model.config.n_positions} tokens)", file=sys.stderr)
            break
        dist, _ = gen.preview(settings)
        frame = gen.step(settings)
        chosen = frame.tokens[-1]
        top = [{"id": int(t), "token": tok.token_text(int(t)), "prob": float(dist.raw[t]),
                "sampled_prob": float(dist.final[t])} for t in dist.top(10, "raw")]
        if a.json:
            print(json.dumps({"step": i + 1, "position": len(frame.tokens) - 1, "token_id": chosen,
                              "token": tok.token_text(chosen), "prob": float(dist.raw[chosen]),
                              "sampled_prob": float(dist.final[chosen]), "top": top,
                              "elapsed_ms": round(frame.elapsed_ms, 2), "ms": round(forward_ms, 2),
                              "interventions": describe_all(ivs)}, ensure_ascii=False), flush=True)
        else:
            print(f"step {i + 1}: {tok.token_display(chosen)!s}  (p={dist.raw[chosen]:.1%})")
            for r, c in enumerate(top, 1):
                print(f"   {r:2d}. {tok.token_display(c['id']):<16} {c['prob']:7.2%}   after settings {c['sampled_prob']:7.2%}")
        forward_ms = frame.elapsed_ms
    if not a.json:
        print("text: " + tok.decode(list(gen.tokens)))
    return 0


def cmd_export(a) -> int:
    from gpt2viz.core.model_folder.locations import user_models_dir

    if a.upgrade:
        from gpt2viz.core.export.upgrade import upgrade_folder

        upgrade_folder(Path(a.source), progress=lambda m: print(m, file=sys.stderr))
        print(Path(a.source).resolve())
        return 0
    try:
        from gpt2viz.core.export.exporter import ExportError, export_model
        import optimum.exporters.onnx  # noqa: F401
    except ImportError as e:
        raise CliError(f"export needs the export extra ({e.name} is missing): pip install 'gpt2viz[export]'") from None
    out = a.out or user_models_dir() / Path(a.source.rstrip("/")).name
    try:
        export_model(a.source, out, name=a.name, force=a.force, progress=lambda m: print(m, file=sys.stderr))
    except ExportError as e:
        raise CliError(str(e)) from None
    print(out)
    return 0


def cmd_models(a) -> int:
    from gpt2viz.core.model_folder.locations import find_models, search_dirs
    from gpt2viz.core.model_folder.manifest import describe_folder

    rows = [d for d in (describe_folder(p) for p in find_models()) if d]
    if a.json:
        print(json.dumps(rows, ensure_ascii=False))
        return 0
    for r in rows:
        c = r["config"]
        print(f"{r['name']:<16} {r['n_params'] or 0:>13,} params  {c['n_layer']} layers × {c['n_head']} heads × "
              f"{c['n_embd']}  ctx {c['n_positions']}  {r['folder']}")
    if not rows:
        print("no models found")
    print("searched: " + ", ".join(str(d) for d in search_dirs()), file=sys.stderr)
    return 0


def cmd_snapshot(a) -> int:
    if a.steps < 0:
        raise CliError(f"--steps must be ≥ 0, got {a.steps}")
    try:
        from gpt2viz.app import qt_messages
        from gpt2viz.headless import run_snapshot
    except ImportError as e:
        raise CliError(f"snapshots need Qt: {e}") from None
    qt_messages.install()  # offscreen Qt's plugin chatter would bury the real output
    for path in run_snapshot(a):
        print(path)
    return 0


def cmd_report(a) -> int:
    if a.steps < 0:
        raise CliError(f"--steps must be ≥ 0, got {a.steps}")
    try:
        from gpt2viz.app import qt_messages
        from gpt2viz.headless import run_report
    except ImportError as e:
        raise CliError(f"reports need Qt: {e}") from None
    qt_messages.install()  # offscreen Qt's plugin chatter would bury the real output
    print(run_report(a, command="gpt2viz " + " ".join(sys.argv[1:]) if sys.argv[1:2] == ["report"] else ""))
    return 0


def cmd_app(a) -> int:
    try:
        from gpt2viz.app import qt_messages
        from gpt2viz.launch import run_app
    except ImportError as e:  # a headless install without Qt's libraries
        raise CliError(f"the desktop app cannot start: {e}. The command line (`gpt2viz run`, "
                       "`gpt2viz tokenize`) works without it") from None
    qt_messages.install()
    return run_app(a.model, prompt=a.prompt, steps=max(0, a.steps), lang=a.lang, journey=a.journey, args=a,
                   device=a.device)


def cmd_patch(a) -> int:
    from gpt2viz.commands.patch import run_patch

    return run_patch(a, _open_model(a.model, a.device))


def cmd_edit(a) -> int:
    from gpt2viz.commands.edit import run

    return run(a, _opener(a))


def cmd_attribute(a) -> int:
    from gpt2viz.commands.attribute import run

    return run(a, _opener(a))


def cmd_features(a) -> int:
    from gpt2viz.commands.features import run

    return run(a, _opener(a))


def cmd_graph(a) -> int:
    from gpt2viz.commands.graph import run

    return run(a, _opener(a))


def cmd_sae_dashboards(a) -> int:
    from gpt2viz.commands.sae_dashboards import run

    return run(a, _open_model)


def cmd_train_sae(a) -> int:
    from gpt2viz.commands.train_sae import run

    return run(a, _opener(a))


COMMANDS = {"tokenize": cmd_tokenize, "run": cmd_run, "export": cmd_export, "models": cmd_models,
            "snapshot": cmd_snapshot, "report": cmd_report, "patch": cmd_patch, "attribute": cmd_attribute,
            "edit": cmd_edit, "features": cmd_features, "train-sae": cmd_train_sae, "graph": cmd_graph,
            "sae-dashboards": cmd_sae_dashboards}


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `gpt2viz` script; returns the exit status."""
    from gpt2viz.core.model_folder.manifest import ModelFolderError
    from gpt2viz.core.engine.device import providers_for
    from gpt2viz.core.engine.errors import ContextLimitError

    a = build_parser().parse_args(argv)
    try:
        # every command (and the app) refuses an impossible device at once, before a model or a window opens
        providers_for(getattr(a, "device", "cpu"))
        return COMMANDS.get(a.command, cmd_app)(a)
    except BrokenPipeError:  # `gpt2viz run ... | head`: the reader left; that is not an error
        sys.stdout = open("/dev/null", "w")  # noqa: SIM115 - silence the flush at interpreter exit
        return 0
    except (CliError, ModelFolderError, ContextLimitError, ValueError, OSError) as e:
        print(f"gpt2viz: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130

#!/usr/bin/env bash
# Regenerate every picture under docs/ from the bundled model (run from the repository root, venv active).
# The window shots need a real X server (Xvfb, via ../shared/tools/shot.sh or SHOT=path/to/shot.sh);
# everything else renders offscreen.
set -euo pipefail
cd "$(dirname "$0")/.."
SHOT=${SHOT:-../shared/tools/shot.sh}
P="The capital of France is"
export PYTHONPATH=$PWD
# a fresh settings folder: the window shots take the default layout, not a splitter saved by an earlier run
export XDG_CONFIG_HOME=$(mktemp -d)
g() { python -m gpt2viz "$@" >/dev/null; }

# window (real X): English after three steps, Chinese, three journey pages in Chinese
if [ -x "$SHOT" ]; then
  (unset QT_QPA_PLATFORM; "$SHOT" docs/screenshot.png -- python -m gpt2viz --prompt "$P" --steps 3 --lang en)
  (unset QT_QPA_PLATFORM; "$SHOT" docs/zh/main.png -- python -m gpt2viz --prompt "$P" --steps 3 --lang zh)
  for page in tokens:2 attention:5 choose:10; do  # name:page number (gpt2viz.core.viewmodels.journey.PAGES, from 1)
    (unset QT_QPA_PLATFORM; "$SHOT" "docs/zh/journey-${page%%:*}.png" -- python -m gpt2viz --prompt "$P" --lang zh --journey "${page##*:}")
  done
  # ablation, compare, patching, causal trace (issue 13): a taller screen, the analyses need room
  B="The capital of Germany is"
  shot13() { local name=$1; shift; (unset QT_QPA_PLATFORM; "$SHOT" "docs/views/$name.png" --size 1800x1350 --wait 8 -- python -m gpt2viz --lang en --prompt "$P" "$@"); }
  shot13 ablation --ablate-head 4.1 --ablate-mlp 4
  shot13 compare --compare "$B"
  shot13 patching --compare "$B" --analysis patching
  shot13 causal-trace --analysis causal-trace --subject " France"
fi

export QT_QPA_PLATFORM=offscreen
python scripts/view_screenshots.py --out docs/views --layer 1 --head 3 >/dev/null
python scripts/edit_screenshots.py --out docs/views >/dev/null  # the causal trace and Path view after an edit
python scripts/graph_check_screenshots.py --out docs/views >/dev/null  # graph ablation scatter and a supernode
python scripts/features_screenshots.py --out docs >/dev/null  # the Features tab and the journey's circuit page
rm -f docs/views/window.png  # the README shows the real X window instead
for v in attention lens chart; do g snapshot --prompt "$P" --view "$v" --layer 1 --head 3 --scale 2 --out "docs/exports/$v.png" --force; done
g snapshot --prompt "$P" --view patching --corrupt "The capital of Germany is" --scale 2 --out docs/exports/patching.png --force
g snapshot --prompt "$P" --view causal-trace --subject " France" --scale 2 --out docs/exports/causal-trace.png --force
g snapshot --prompt "$P" --compare "The capital of Germany is" --view lens --scale 2 --out docs/exports/compare-lens.png --force
tmp=$(mktemp -d)
g snapshot --prompt "$P" --view attention --all-layers --out "$tmp/all" --force
cp "$tmp"/all/*all-layers.png docs/exports/attention-all-layers.png
g report --prompt "$P" --out "$tmp/report.pdf" --force
for n in 1 2; do pdftoppm -png -r 60 -f $n -l $n -singlefile "$tmp/report.pdf" "docs/report/page-$n"; done
rm -rf "$tmp"
echo "docs/ regenerated; look at every picture before committing"

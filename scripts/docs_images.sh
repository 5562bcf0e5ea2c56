#!/usr/bin/env bash
# Regenerate every picture under docs/ from the bundled model (run from the repository root, venv active).
# The window shots need a real X server (Xvfb, via ../shared/tools/shot.sh or SHOT=path/to/shot.sh);
# everything else renders offscreen.
set -euo pipefail
cd "$(dirname "$0")/.."
SHOT=${SHOT:-../shared/tools/shot.sh}
P="The capital of France is"
export PYTHONPATH=$PWD
g() { python -m gpt2viz "$@" >/dev/null; }

# window (real X): English after three steps, Chinese, three journey pages in Chinese
if [ -x "$SHOT" ]; then
  (unset QT_QPA_PLATFORM; "$SHOT" docs/screenshot.png -- python -m gpt2viz --prompt "$P" --steps 3 --lang en)
  (unset QT_QPA_PLATFORM; "$SHOT" docs/zh/main.png -- python -m gpt2viz --prompt "$P" --steps 3 --lang zh)
  for page in tokens:2 attention:5 choose:10; do  # name:page number (gpt2viz.core.journey.PAGES, from 1)
    (unset QT_QPA_PLATFORM; "$SHOT" "docs/zh/journey-${page%%:*}.png" -- python -m gpt2viz --prompt "$P" --lang zh --journey "${page##*:}")
  done
fi

export QT_QPA_PLATFORM=offscreen
python scripts/view_screenshots.py --out docs/views --layer 1 --head 3 >/dev/null
for v in attention lens chart; do g snapshot --prompt "$P" --view "$v" --layer 1 --head 3 --scale 2 --out "docs/exports/$v.png" --force; done
tmp=$(mktemp -d)
g snapshot --prompt "$P" --view attention --all-layers --out "$tmp/all" --force
cp "$tmp"/all/*sheet*.png docs/exports/attention-all-layers.png
g report --prompt "$P" --out "$tmp/report.pdf" --force
pdftoppm -png -r 60 -f 1 -l 2 "$tmp/report.pdf" "$tmp/page"
cp "$tmp"/page-1.png docs/report/page-1.png; cp "$tmp"/page-2.png docs/report/page-2.png
rm -rf "$tmp"
echo "docs/ regenerated; look at every picture before committing"

"""The one table of view names: what the command line, the export menu and the tabs call each view."""

from gpt2viz.core.session.session import StageKind

VIEWS = ("pipeline", "chart", "tokens", "embeddings", "attention", "head", "mlp", "lens", "residual", "path",
         "attribution", "features", "feature")
PER_LAYER = ("attention", "head", "mlp")
# views of analyses that need the worker first (snapshot --view; the window's Analysis dock)
ANALYSIS_VIEWS = ("patching", "causal-trace")
# two prompts compared (snapshot --compare TEXT --view chart|lens|attention)
COMPARE_VIEWS = {"chart": "compare-chart", "lens": "compare-lens", "attention": "compare-attention"}
# detail views: view name -> tab title ("head" is the attention tab's large heatmap)
TAB = {"tokens": "Tokens", "embeddings": "Embeddings", "attention": "Attention", "head": "Attention",
       "mlp": "MLP", "lens": "Logit lens", "residual": "Residual",
       "path": "Path", "attribution": "Path", "features": "Features", "feature": "Features"}
# which detail view a pipeline stage opens (blocks open attention; the MLP tab is one click away)
STAGE_VIEW = {StageKind.TOKENS: "tokens", StageKind.EMBED: "embeddings", StageKind.BLOCK: "attention",
              StageKind.LN_FINAL: "residual", StageKind.LM_HEAD: "lens", StageKind.SOFTMAX: "lens",
              StageKind.CHOOSE: "lens"}


def view_of_tab(title: str) -> str:
    """The view name of a detail tab (the attention tab is "attention", not "head"; the Path tab is "path")."""
    return next(v for v, t in TAB.items() if t == title and v not in ("head", "attribution", "feature"))

"""The main area: one tab per kind of stage, switched by the pipeline's selection."""

from __future__ import annotations

from PySide6.QtWidgets import QTabWidget

from gpt2viz.app.state import AppState
from gpt2viz.widgets.views.attention_view import AttentionView
from gpt2viz.widgets.views.embed_view import EmbeddingsView
from gpt2viz.widgets.views.lens_view import LensView
from gpt2viz.widgets.views.mlp_view import MlpView
from gpt2viz.widgets.views.path_view import PathView
from gpt2viz.widgets.views.residual_view import ResidualView
from gpt2viz.widgets.views.tokens_view import TokensView

# Which tab a pipeline stage opens (blocks open attention; the MLP tab is one click away).
STAGE_TAB = {"tokens": "Tokens", "embed": "Embeddings", "ln_final": "Residual", "lm_head": "Logit lens",
             "softmax": "Logit lens", "choose": "Logit lens"}


class DetailTabs(QTabWidget):
    """Tokens, Embeddings, Attention, MLP, Logit lens, Residual, Path."""

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.state = state
        self.views = {"Tokens": TokensView(state), "Embeddings": EmbeddingsView(state),
                      "Attention": AttentionView(state), "MLP": MlpView(state),
                      "Logit lens": LensView(state), "Residual": ResidualView(state), "Path": PathView(state)}
        for name, view in self.views.items():
            self.addTab(view, name)
        self.views["Path"].sigOpenTab.connect(lambda name: self.setCurrentWidget(self.views[name]))
        self._stage = None
        state.sigSelection.connect(self._follow_stage)
        self._follow_stage()

    def _follow_stage(self) -> None:
        stage = self.state.stage
        if stage == self._stage:
            return  # a position or head change keeps the tab the user is on
        self._stage = stage
        name = "Attention" if stage.startswith("block.") and self.currentWidget() is not self.views["MLP"] \
            else STAGE_TAB.get(stage)
        if name:
            self.setCurrentWidget(self.views[name])

"""The main area: one tab per kind of stage, switched by the pipeline's selection."""

from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QTabWidget

from gpt2viz.app.sessions import SessionId
from gpt2viz.app.state import AppState
from gpt2viz.core.session.session import StageKind
from gpt2viz.widgets.language import Retranslating
from gpt2viz.widgets.view_names import STAGE_VIEW, TAB
from gpt2viz.widgets.views.attention_view import AttentionView
from gpt2viz.widgets.views.embed_view import EmbeddingsView
from gpt2viz.widgets.views.features_view import FeaturesView
from gpt2viz.widgets.views.lens_view import LensView
from gpt2viz.widgets.views.mlp_view import MlpView
from gpt2viz.widgets.views.path_view import PathView
from gpt2viz.widgets.views.residual_view import ResidualView
from gpt2viz.widgets.views.tokens_view import TokensView


class DetailTabs(Retranslating, QTabWidget):
    """Tokens, Embeddings, Attention, MLP, Logit lens, Residual, Path, Features, for one session."""

    def __init__(self, state: AppState, session: SessionId = SessionId.A, parent=None):
        super().__init__(parent)
        # No frame around the pages: the style filled the whole page area to draw it (1.6 ms of every frame
        # after a step, behind a view that paints over it).
        self.setDocumentMode(True)
        self.state = state
        self.name = session
        self.session = state.session(session)
        self.views = {"Tokens": TokensView(state, session), "Embeddings": EmbeddingsView(state, session),
                      "Attention": AttentionView(state, session), "MLP": MlpView(state, session),
                      "Logit lens": LensView(state, session), "Residual": ResidualView(state, session),
                      "Path": PathView(state, session), "Features": FeaturesView(state, session)}
        for name, view in self.views.items():
            self.addTab(view, self.tab_label(name))
        self.views["Path"].sigOpenTab.connect(lambda name: self.setCurrentWidget(self.views[name]))
        self._stage = None
        state.sigSelection.connect(lambda name: name == self.name and self._follow_stage())
        self._follow_stage()

    _placed = None  # (size, tab bar hint, ...) when the tab widget last placed its tab bar and page

    def event(self, e) -> bool:
        # A QTabWidget answers every layout request by placing its tab bar and page again and repainting
        # itself whole: the tab bar, the page's frames, labels and scroll bars (~2 ms of a step's frame). Any
        # text that changes in the shown page (a caption's position count, a title) sends one up here. When
        # neither the widget's size nor its tab bar's changed, the places are the ones it has: the request
        # only goes on up, so that the window still hears of the pages' new size hints.
        if e.type() == QEvent.LayoutRequest:
            bar = self.tabBar()
            placed = (self.size(), bar.sizeHint(), bar.isVisible(), self.count(), self.currentIndex())
            if placed == self._placed:
                self.updateGeometry()
                return True
            self._placed = placed
        return super().event(e)

    def retranslate(self) -> None:
        """Tab titles in the current language (each view retranslates itself)."""
        for name, view in self.views.items():
            self.setTabText(self.indexOf(view), self.tab_label(name))

    def tab_label(self, name: str) -> str:
        """The shown title of the tab called ``name`` (the English names stay the views' keys)."""
        return {"Tokens": self.tr("Tokens"), "Embeddings": self.tr("Embeddings"), "Attention": self.tr("Attention"),
                "MLP": self.tr("MLP"), "Logit lens": self.tr("Logit lens"), "Residual": self.tr("Residual"),
                "Path": self.tr("Path"), "Features": self.tr("Features")}[name]

    def _follow_stage(self) -> None:
        stage = self.session.selection.stage
        if stage == self._stage:
            return  # a position or head change keeps the tab the user is on
        self._stage = stage
        if stage.kind is StageKind.BLOCK and self.currentWidget() in (self.views["MLP"], self.views["Features"]):
            return  # moving between blocks keeps the MLP or Features tab open
        self.setCurrentWidget(self.views[TAB[STAGE_VIEW[stage.kind]]])

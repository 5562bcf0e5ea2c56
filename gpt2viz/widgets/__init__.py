"""Views: QtWidgets + pyqtgraph. Each reads the AppState and asks it for changes; none calls the model."""

"""Application layer: state, worker thread, settings (QtCore) and the command line.

Importing this package imports no Qt: the command line works headless.
"""

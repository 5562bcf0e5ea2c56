"""Application layer (QtCore only): the state holding the sessions, the worker thread, settings, stage words.

The command line sits above the widgets, in ``gpt2viz.cli``.
"""

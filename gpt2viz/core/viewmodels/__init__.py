"""View models: for each view, a function (session, selection) -> frozen summary the view only draws.

Numbers and token ids, not sentences: the words are put together in ``gpt2viz.app`` / ``gpt2viz.widgets``
(where they can be translated). Every function reads ``session.selection`` unless given one.
"""

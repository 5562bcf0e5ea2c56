"""The one rule for the position a view shows."""

from gpt2viz.core.session.session import Selection


def test_position_in_follows_the_newest_token_unless_one_is_selected():
    assert Selection().position_in(5) == 4  # nothing selected: the newest token
    assert Selection(position=2).position_in(5) == 2
    assert Selection(position=9).position_in(5) == 4  # past the end (the text got shorter): the newest
    assert Selection(position=0).position_in(1) == 0

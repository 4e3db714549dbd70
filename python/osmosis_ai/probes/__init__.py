"""Will this reward train? Checks of reward functions before a training run spends days on them.

- :mod:`.controls`: the negative controls built from a dataset row (empty answer, echoed question, ...).
- :mod:`.probe`: ``osmosis reward probe``: every eval function on every control, on the run engine.
- :mod:`.report`: per function and probe, how often a control scores as high as the correct answer.
- :mod:`.diff`: ``osmosis reward diff``: re-scores a results log with two versions of an eval function.
"""

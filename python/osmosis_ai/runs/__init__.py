"""THE run engine: every command that runs many items (``eval``, ``test``, ``eval-rubric``) runs them here.

- :mod:`.engine`: work items (row x attempt x model), bounded concurrency, per-item timeout, early stop,
  Ctrl+C / SIGTERM handling; each finished item is appended to the results log before the next is counted.
- :mod:`.work`: what the engine works on and reports: work items and their records, the sinks, the
  outcome, the control an executor has, the :class:`~osmosis_ai.runs.work.Executor` protocol.
- :mod:`.log`: the one results log (a header, then one record per item; schema ``osmosis-results/1``)
  and ``--resume``.
- :mod:`.progress`: the one progress display.
- :mod:`.backends`: where items execute, ``local`` (in-process) or ``ray`` (:mod:`.ray_backend`: Ray actors
  rebuild the command's executor from a picklable spec; :mod:`.ray_modules` ships the user's code).
"""

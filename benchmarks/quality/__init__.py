"""The parts of the quality evaluation that ``python benchmarks/eval_quality.py`` runs.

``questions`` (the sets, the questions a run takes, what a question's answer metrics may count), ``folio_runs``
(folio in-process or over REST), ``peers`` (the peer pipelines) and ``peer_runs`` (them through the peer cache),
``records`` (one record per question, system and budget), ``metrics`` (the measures) and ``report`` (the tables;
``python benchmarks/quality/report.py --misses SET SYSTEM BUDGET`` lists one system's misses).
"""

"""The rule extractor, by role: ``gates`` (run a pattern only where its wording occurs),
``sentences`` and ``filler`` (cutting a turn into claims), ``cues`` (markers, hedges,
categories), ``claims`` (what the speaker meant), ``person`` (first person to third),
``dates``, ``entities``, ``slots`` (the question a claim answers) and ``rules`` (the
pipeline, ``extract_rules``). ``core.rule_extractor`` re-exports the public names."""

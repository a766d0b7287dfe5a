"""Pattern tables for the signal scanner (``core.signals``), by role: ``phrases`` (cue
phrases), ``temporal``, ``names`` (entity tables), ``hits`` (spelling -> prebuilt hit),
``lexer`` (the one regex), ``filters`` and ``words``. ``core.signal_patterns`` re-exports
them under one name."""

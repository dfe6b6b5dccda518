"""The turn layer: per-turn emotion labels, bot support strategies and the annotators that assign
them (an offline lexicon annotator and an LLM annotator behind one interface)."""

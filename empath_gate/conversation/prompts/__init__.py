"""Versioned prompt templates of the conversation engine (package resources).

``auditor_v2.md`` is the LLM auditor's system prompt. Its version string, which enters every
auditor cache key, is the file name stem plus the first 12 hex digits of the sha256 of its
text, so an edited template can never reuse replies cached for the old one.
"""

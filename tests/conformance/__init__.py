"""The conformance suite: OpInfo-style operator entries checked against torch (see ``framework.py``)."""

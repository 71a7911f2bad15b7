"""What the two AWS JSON protocols (Glue, Lake Formation) share: botocore's models (model.py),
validation against them (quick_check.py, then validate.py to word the errors; shape_rules.py),
decoding and serving a request (wire.py), and the handlers' common arguments (common.py)."""

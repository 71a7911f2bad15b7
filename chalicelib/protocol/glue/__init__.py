"""The AWS Glue Data Catalog API (AWS JSON 1.1): wire.py, routes.py, one handler module per API family."""

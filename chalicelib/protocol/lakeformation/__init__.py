"""The AWS Lake Formation API (REST-JSON): wire.py, routes.py, one handler module per API family."""

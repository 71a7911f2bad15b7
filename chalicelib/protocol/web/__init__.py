"""The catalog browser (static files under /ui) and the health endpoint (GET /health, /ping)."""

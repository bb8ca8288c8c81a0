"""One router per resource; ``api.http.app.create_app`` mounts them under ``/v1``."""

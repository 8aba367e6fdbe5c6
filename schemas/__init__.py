"""JSON Schema files for dsh session logs (package data; see README.md here)."""

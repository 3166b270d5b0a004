"""Published numbers of the reproduced papers, as package data (see README.md here)."""

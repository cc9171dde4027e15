"""minefield: work in progress (not yet registered: no GAME here)."""

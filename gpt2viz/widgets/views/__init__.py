"""Detail views, one module per stage of the journey; each follows the shared selection."""

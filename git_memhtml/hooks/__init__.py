"""hooks package."""

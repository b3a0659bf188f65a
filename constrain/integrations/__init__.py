"""Engine integrations over the engine-neutral Matcher API (each imports its engine on use)."""

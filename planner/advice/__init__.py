"""From a priced search to advice: the guard, the ranking, the held-out check, drift, status, re-layout plans."""

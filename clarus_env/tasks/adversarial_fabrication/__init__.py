"""adversarial_fabrication: a backdated Good Faith Estimate, then holding the dispute."""

"""What the app says, each number a checked claim: claims, explanations, placeholders,
sentences, why-topics, scenes and the design lab."""

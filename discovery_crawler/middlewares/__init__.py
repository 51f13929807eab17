"""Downloader middlewares: politeness and safety between the engine and the network."""

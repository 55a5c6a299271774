"""stub"""
CONTROLS: list = []

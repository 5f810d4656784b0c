"""xrelay.instrument"""

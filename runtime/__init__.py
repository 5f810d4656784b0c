"""xrelay.runtime"""

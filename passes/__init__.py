"""xrelay.passes"""

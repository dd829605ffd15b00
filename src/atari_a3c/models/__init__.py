"""The models: the encoders, the LSTM core, the actor-critic heads, and DQN's exploration rule."""

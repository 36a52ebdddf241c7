// placeholder until the SDK lands
